"""Text, sets and sequences: build -> search in Python equals the genie
command on the same data (the index files byte for byte, the answers hit
for hit)."""
import os

import numpy as np
import pytest

import genie
from conftest import ROOT, backend, cli, hits_to_arrays, tsv, write_lines

FORTUNES = "/usr/share/games/fortunes/fortunes"


def documents(n=600):
    """Fortune cookies as one line each (or generated text without the fortunes package)."""
    if os.path.exists(FORTUNES):
        with open(FORTUNES, encoding="utf-8", errors="replace") as f:
            recs = [" ".join(r.split()) for r in f.read().split("\n%\n")]
        return [r for r in recs if r][:n]
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(300)]
    return [" ".join(rng.choice(words, rng.integers(1, 20))) for _ in range(n)]


def test_text_equals_cli(tmp_path):
    docs = documents()
    src = write_lines(tmp_path / "docs.txt", docs)
    stop = os.path.join(ROOT, "scripts", "english-stopwords.txt")
    cli("build", "-q", "-t", "text", "--stop-words", stop, "-o", tmp_path / "cli.genie", src)
    with open(stop) as f:
        stop_words = f.read().split()
    queries = [docs[5], docs[17][:40], "love and war", "computers are useless", "", "zzzz unknown words"]
    with genie.TextIndex.build(docs, tmp_path / "py.genie", stop_words=stop_words) as idx:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        counts, ids = idx.search(queries, k=5, backend=backend())
        rows = tsv(cli("search", "-q", "-b", "cpu", "-k", 5, tmp_path / "cli.genie",
                       write_lines(tmp_path / "q.txt", queries)))
        c_cli, i_cli = hits_to_arrays(rows, len(queries), 5, 4, np.int32, -1)
        np.testing.assert_array_equal(ids, i_cli)
        np.testing.assert_array_equal(counts, c_cli)
        assert (ids[-2:] == -1).all()
        assert ids[0, 0] == 5 and idx.record(5) == docs[5]
        assert idx.info["n_words"] > 100


def test_sets_equal_cli(tmp_path):
    rng = np.random.default_rng(9)
    universe = [f"pkg{i}" for i in range(80)]
    sets = [list(rng.choice(universe, rng.integers(1, 12), replace=False)) for _ in range(500)]
    lines = [" ".join(s) for s in sets]
    src = write_lines(tmp_path / "sets.txt", lines)
    cli("build", "-q", "-t", "sets", "-m", 32, "--seed", 4, "-o", tmp_path / "cli.genie", src)
    queries = sets[:20] + [["pkg1", "pkg2", "nosuch"], ["nosuch"]]
    with genie.SetIndex.build(sets, tmp_path / "py.genie", hashes=32, seed=4) as idx:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        qf = write_lines(tmp_path / "q.txt", [" ".join(q) for q in queries])
        for exact, opts in ((False, ["-K", 40]), (True, ["--exact"])):
            sim, ids = idx.search(queries, k=6, candidates=None if exact else 40, exact=exact, backend=backend())
            assert sim.shape == ids.shape == (22, 6)
            rows = tsv(cli("search", "-q", "-b", "cpu", "-k", 6, *opts, tmp_path / "cli.genie", qf))
            s_cli, i_cli = hits_to_arrays(rows, len(queries), 6, 3, np.float64, 0.0)
            np.testing.assert_array_equal(ids, i_cli)
            np.testing.assert_allclose(sim, s_cli, atol=1e-6)
            assert (ids[-1] == -1).all()
        # exact Jaccard of the top hit, computed here
        for q, row, s in zip(queries[:20], ids, sim):
            a, b = set(q), set(sets[row[0]])
            assert s[0] == pytest.approx(len(a & b) / len(a | b))
    with genie.SetIndex.build(["a,b c,d", "d,a"], tmp_path / "sep.genie", separator=",") as idx:
        sim, ids = idx.search([["a", "b c"]], k=2, separator=",", exact=True)
        np.testing.assert_allclose(sim[0], [2 / 3, 1 / 3])


def test_sets_exact_measures_and_thresholds_equal_cli(tmp_path):
    """The exact search's measures and thresholds: the same answers as the
    CLI (ids, similarities to the printed 6 decimals, ties by smaller id),
    and every similarity computed here from the sets themselves."""
    rng = np.random.default_rng(30)
    universe = [f"w{i}" for i in range(60)]
    sets = [list(rng.choice(universe, rng.integers(1, 15), replace=False)) for _ in range(400)]
    sets += [sets[3], sets[3]]  # duplicates: ties
    src = write_lines(tmp_path / "sets.txt", [" ".join(s) for s in sets])
    queries = sets[:12] + [["w1", "w2", "nosuch"], ["nosuch"], rng.choice(universe, 30, replace=False).tolist()]
    qf = write_lines(tmp_path / "q.txt", [" ".join(q) for q in queries])

    def similarity(measure, a, b):
        c = len(a & b)
        return {"jaccard": c / len(a | b), "cosine": c / np.sqrt(len(a) * len(b)),
                "dice": 2 * c / (len(a) + len(b)), "overlap": c / min(len(a), len(b)),
                "containment": c / len(a)}[measure]

    with genie.SetIndex.build(sets, tmp_path / "s.genie") as idx:
        for measure in ("jaccard", "cosine", "dice", "overlap", "containment"):
            st = {}
            sim, ids = idx.search(queries, k=7, exact=True, measure=measure, backend=backend(), stats=st)
            assert st["method"] == "exact" and st["candidates"] == 0
            rows = tsv(cli("search", "-q", "-b", "cpu", "-k", 7, "--exact", "--measure", measure, tmp_path / "s.genie", qf))
            s_cli, i_cli = hits_to_arrays(rows, len(queries), 7, 3, np.float64, 0.0)
            np.testing.assert_array_equal(ids, i_cli)
            np.testing.assert_allclose(sim, s_cli, atol=5e-7)
            for q, row, srow in zip(queries, ids, sim):
                for o, v in zip(row, srow):
                    if o >= 0:
                        assert v == pytest.approx(similarity(measure, set(q), set(sets[o])), abs=1e-12)
            if measure != "jaccard":  # answered exactly without asking
                _, ids2 = idx.search(queries, k=7, measure=measure, backend=backend())
                np.testing.assert_array_equal(ids2, ids)
        # a threshold: every set reaching it (lists), the best k of them (arrays)
        sims, idss = idx.search(queries, k=None, min_similarity=0.4, measure="dice", backend=backend())
        rows = tsv(cli("search", "-q", "-b", "cpu", "--min-similarity", 0.4, "--measure", "dice", tmp_path / "s.genie", qf))
        assert sum(len(i) for i in idss) == len(rows) > 20
        for r in rows:
            q, rank = int(r[0]) - 1, int(r[1]) - 1
            assert idss[q][rank] == int(r[2]) and sims[q][rank] == pytest.approx(float(r[3]), abs=5e-7)
        for q, i_q, s_q in zip(queries, idss, sims):
            want = [o for o, s in enumerate(sets) if set(q) & set(s) and similarity("dice", set(q), set(s)) >= 0.4]
            assert sorted(i_q.tolist()) == want and (np.diff(s_q) <= 0).all()
        sim, ids = idx.search(queries, k=2, min_similarity=0.4, measure="dice", backend=backend())
        for i_q, row in zip(idss, ids):
            np.testing.assert_array_equal(row[:min(2, len(i_q))], i_q[:2])
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, k=None)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, min_similarity=1.5)
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, measure="tanimoto")
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(queries, recall=0.9, min_similarity=0.5)


def test_sequences_equal_cli(tmp_path):
    rng = np.random.default_rng(2)
    alphabet = np.array(list("abcdefgh"))
    words = ["".join(rng.choice(alphabet, rng.integers(2, 12))) for _ in range(800)]
    src = write_lines(tmp_path / "w.txt", words)
    cli("build", "-q", "-t", "sequences", "-o", tmp_path / "cli.genie", src)
    queries = [w[:-1] + "x" for w in words[:25]] + ["", "abcabcabc"]
    qf = write_lines(tmp_path / "q.txt", queries)
    with genie.SequenceIndex.build(words, tmp_path / "py.genie") as idx:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        assert idx.gram == 3
        for certify, opts in ((True, ["--certify"]), (False, []), (8, ["-K", 8, "--certify=8"]),
                              ("only", ["--certify-only"])):
            kw = {"candidates": 8} if certify == 8 else {}
            res = idx.search(queries, k=3, certify=certify, backend=backend(), **kw)
            assert len(res) == len(queries)
            rows = tsv(cli("search", "-q", "-b", "cpu", "-k", 3, *opts, tmp_path / "cli.genie", qf))
            got = [(q + 1, r + 1, h.id, h.distance, h.count, "yes" if res[q].certified else "no")
                   for q in range(len(res)) for r, h in enumerate(res[q].hits)]
            want = [(int(a), int(b), int(c), int(d), int(e), f) for a, b, c, d, e, f in rows]
            assert got == want
        exact = idx.search(queries, k=3, exact=True)
        assert all(r.certified for r in exact)
        stats = {}
        certified = idx.search(queries, k=3, certify=True, stats=stats)
        assert all(c.certified for c in certified)  # the fallback scans what the certificate cannot prove
        assert 1 <= stats["fallback"] <= len(queries)  # the empty query at least
        for e, c in zip(exact, certified):
            assert [(h.id, h.distance) for h in e.hits] == [(h.id, h.distance) for h in c.hits]
        assert idx.string(exact[0].hits[0].id) in words
