"""genie.DocsIndex against the genie command (the oracle): the same file
built from the same documents and links, and the same answers as
`genie search --json` in AND, OR and exhaustive mode, on the backend under
test; plus the worked example of docs/DOCS.md and the errors."""
import json
import random

import numpy as np
import pytest

import genie
from conftest import backend, cli, write_lines

WORDS = ["apple", "bread", "cheese", "dough", "egg", "flour", "grape", "honey", "icing", "jam", "kale", "lemon"]


def collection(rng, n):
    docs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 8))) for _ in range(n)]
    links = [(rng.randrange(n), rng.randrange(n)) for _ in range(2 * n)]
    return docs, links


def queries(rng, n):
    qs = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3))) for _ in range(n)]
    return qs + ["", "absent", "apple absent", "APPLE, apple"]


def cli_json(index, qfile, *opts):
    return [json.loads(line) for line in cli("search", "-q", "--json", "-b", "cpu", *opts, index, qfile).splitlines()]


@pytest.fixture
def built(tmp_path):
    rng = random.Random(7)
    docs, links = collection(rng, 400)
    src = write_lines(tmp_path / "docs.txt", docs)
    write_lines(tmp_path / "links.txt", [f"{a} {b}" for a, b in links])
    cli("build", "-q", "-t", "docs", "--links", tmp_path / "links.txt", "-o", tmp_path / "cli.genie", src)
    idx = genie.DocsIndex.build(docs, tmp_path / "py.genie", links=links)
    qs = queries(rng, 150)
    write_lines(tmp_path / "q.txt", qs)
    yield tmp_path, idx, qs
    idx.close()


def test_same_file_as_cli(built):
    tmp_path, idx, _ = built
    assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
    info = idx.docs_info
    assert info["n_docs"] == 400 and info["score_source"] == "pagerank"
    assert isinstance(genie.open(tmp_path / "py.genie"), genie.DocsIndex)


@pytest.mark.parametrize("opts", [{"k": 5}, {"k": 7, "mode": "or"}, {"k": 400, "exhaustive": True},
                                  {"k": 3, "mode": "or", "exhaustive": True}])
def test_answers_equal_cli_json(built, opts):
    tmp_path, idx, qs = built
    args = ["-k", opts["k"]] + (["--or"] if opts.get("mode") == "or" else []) + \
        (["--exhaustive"] if opts.get("exhaustive") else [])
    want = cli_json(tmp_path / "cli.genie", tmp_path / "q.txt", *args)
    stats = {}
    got = idx.search_hits(qs, backend=backend(), stats=stats, **opts)
    assert len(got) == len(want) == len(qs)
    assert stats["postings_read"] <= stats["postings_total"]
    for q, (g, w) in enumerate(zip(got, want)):
        assert w["query"] == q + 1
        assert [(int(h["record"]), int(h["doc"]), f"{h['score']:.9f}", f"{h['bm25']:.9f}", f"{h['pagerank']:.9f}")
                for h in g] == \
               [(h["record"], h["doc"], f"{h['score']:.9f}", f"{h['bm25']:.9f}", f"{h['pagerank']:.9f}")
                for h in w["hits"]], f"query {q + 1}: {qs[q]!r}"
    scores, records = idx.search(qs, backend=backend(), **opts)
    assert scores.shape == records.shape == (len(qs), opts["k"])
    for q, w in enumerate(want):
        n = len(w["hits"])
        assert records[q, :n].tolist() == [h["record"] for h in w["hits"]]
        assert (records[q, n:] == -1).all() and (scores[q, n:] == 0).all()
        np.testing.assert_array_equal(scores[q, :n], [h["score"] for h in got[q]])


def test_early_termination_equals_exhaustive(built):
    _, idx, qs = built
    for mode in ("and", "or"):
        for k in (1, 4, 50):
            a = idx.search_hits(qs, k=k, mode=mode, backend=backend())
            b = idx.search_hits(qs, k=k, mode=mode, exhaustive=True, backend="cpu")
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)  # docIDs and scores bit for bit


def test_worked_example(tmp_path):
    """docs/DOCS.md, "A worked example": computed by hand there."""
    idx = genie.DocsIndex.build(["a a b", "A, c!", "b c c c"], tmp_path / "w.genie")
    scores, records = idx.search(["a", "a b", "c"], k=2)
    assert records.tolist() == [[0, 1], [0, -1], [2, 1]]
    assert scores[0, 0] == pytest.approx(0.3 + 0.7 * 2 / 3.2, abs=1e-12)
    assert scores[0, 1] == pytest.approx(0.3 + 0.7 / 1.9, abs=1e-12)
    assert scores[1, 0] == pytest.approx(0.3 + 0.7 * (0.5 * 2 / 3.2 + 0.5 / 2.2), abs=1e-12)
    assert scores[2, 0] == pytest.approx(0.3 + 0.7 * 3 / 4.5, abs=1e-12)
    doc = idx.search_hits(["c"], k=1)[0][0]["doc"]
    assert idx.record(int(doc)) == "b c c c"
    assert idx.document(int(doc))["record"] == 2 and idx.document(int(doc))["length"] == 4


def test_static_scores_and_cache_plan(tmp_path):
    idx = genie.DocsIndex.build(["x y", "x", "y z", "x z"], tmp_path / "s.genie", static_scores=[0, 3, 1, 2],
                                store_records=False)
    assert idx.docs_info["score_source"] == "static"
    assert idx.search(["x"], k=3)[1].tolist() == [[1, 3, 0]]
    idx.make_cache_plan(["x", "x z", "y"], tmp_path / "plan", policy="qtf")
    want = idx.search_hits(["x", "z", "x y"], k=2)
    got = idx.search_hits(["x", "z", "x y"], k=2, backend=backend(), cache_plan=tmp_path / "plan",
                          gpu_memory=1 << 20, cache_fraction=0.25)
    for x, y in zip(got, want):
        np.testing.assert_array_equal(x, y)


def test_errors(tmp_path):
    with pytest.raises(genie.InvalidArgumentError):
        genie.DocsIndex.build([], tmp_path / "e.genie")
    with pytest.raises(genie.InvalidArgumentError, match="exclude"):
        genie.DocsIndex.build(["a"], tmp_path / "e.genie", links=[(0, 0)], static_scores=[1])
    with pytest.raises(genie.InvalidArgumentError):
        genie.DocsIndex.build(["a", "b"], tmp_path / "e.genie", links=[(0, 5)])  # a missing record
    with pytest.raises(genie.InvalidArgumentError):
        genie.DocsIndex.build(["a"], tmp_path / "e.genie", alpha=2)
    idx = genie.DocsIndex.build(["a b", "b"], tmp_path / "ok.genie")
    for bad in ({"k": 0}, {"mode": "xor"}, {"cache_fraction": 1.5}):
        with pytest.raises(genie.InvalidArgumentError):
            idx.search(["a"], **bad)
    genie.build_keywords([[1]], tmp_path / "kw.genie").close()
    with pytest.raises(genie.InvalidArgumentError, match="not a docs index"):
        genie.DocsIndex.open(tmp_path / "kw.genie")
    idx.close()
    with pytest.raises(genie.InvalidArgumentError, match="closed"):
        idx.search(["a"])
