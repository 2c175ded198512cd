"""Recall targets from Python: the same K and answers as `genie search
--recall`, the estimate in the stats, bad targets refused."""
import math

import numpy as np
import pytest

import genie
from conftest import cli, hits_to_arrays, tsv, write_lines


def test_sets_recall_equals_cli(tmp_path):
    rng = np.random.default_rng(4)
    universe = [f"e{i}" for i in range(300)]
    sets = [list(rng.choice(universe, rng.integers(3, 15), replace=False)) for _ in range(800)]
    src = write_lines(tmp_path / "sets.txt", [" ".join(s) for s in sets])
    cli("build", "-q", "-t", "sets", "-o", tmp_path / "s.genie", src)
    queries = sets[:30]
    qf = write_lines(tmp_path / "q.txt", [" ".join(q) for q in queries])
    with genie.SetIndex.open(tmp_path / "s.genie") as idx:
        est = idx.recall_estimate(10, 100)  # genie build stored it
        assert est is not None and 0 <= est <= 1
        stats = {}
        sim, ids = idx.search(queries, k=10, recall=0.9, backend="cpu", stats=stats)
        assert stats["recall_estimate"] >= 0.9
        rows = tsv(cli("search", "-q", "-b", "cpu", "-k", 10, "--recall", 0.9, tmp_path / "s.genie", qf))
        _, i_cli = hits_to_arrays(rows, len(queries), 10, 3, np.float64, 0.0)
        np.testing.assert_array_equal(ids, i_cli)
        if stats["candidates"]:
            # MinHash ran: the same K given explicitly gives the same answers
            assert stats["candidates"] >= 10
            sim2, ids2 = idx.search(queries, k=10, candidates=stats["candidates"], backend="cpu")
        else:
            # the exact search was estimated cheaper than MinHash at that recall (docs/SETS.md)
            assert stats["recall_estimate"] == 1
            sim2, ids2 = idx.search(queries, k=10, exact=True, backend="cpu")
        np.testing.assert_array_equal(ids, ids2)
        for bad in (0, -0.1, 1.5, math.nan, True, "0.9"):
            with pytest.raises(genie.InvalidArgumentError):
                idx.search(queries, k=10, recall=bad)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, k=10, recall=0.9, exact=True)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, k=10, recall=0.9, candidates=50)


def test_sequences_and_vectors_recall(tmp_path):
    rng = np.random.default_rng(8)
    words = ["".join(rng.choice(list("abcdef"), rng.integers(3, 10))) for _ in range(1500)]
    with genie.SequenceIndex.build(words, tmp_path / "w.genie") as idx:
        assert idx.recall_estimate(1, 32) is None  # built here: nothing stored yet
        res = idx.search(words[:20], k=3, recall=0.95, backend="cpu")
        assert len(res) == 20 and all(len(r.hits) == 3 for r in res)
        assert idx.recall_estimate(3, 32) is not None
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(words[:2], k=3, recall=0.9, certify=64)
    base = rng.normal(size=(1000, 8)).astype(np.float32)
    with genie.VectorIndex.build(base, tmp_path / "v.genie", m=32) as idx:
        stats = {}
        d, ids = idx.search(base[:10] + 0.01, k=5, recall=0.9, backend="cpu", stats=stats)
        assert stats["recall_estimate"] >= 0.9 or stats["candidates"] == 0
        assert stats["radius"] in (0, 1, 2)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(base[:2], k=5, recall=0.9, radius=1)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(base[:2], k=101, recall=0.9)
