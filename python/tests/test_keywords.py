"""Keyword indexes: build -> search round trips against the genie command
and against a brute-force match count computed here with numpy."""
import numpy as np
import pytest

import genie
from conftest import backend, cli, hits_to_arrays, tsv, write_lines

N_OBJ, N_KW = 400, 60


def random_objects(rng, n=N_OBJ):
    return [list(rng.integers(0, N_KW, rng.integers(0, 9))) for _ in range(n)]


def random_queries(rng, nq=50):
    qs = []
    for _ in range(nq):
        q = []
        for _ in range(rng.integers(0, 5)):
            lo = int(rng.integers(0, N_KW))
            hi = lo + int(rng.integers(0, 4))
            w = int(rng.integers(1, 4))
            q.append((lo, hi, w))
        qs.append(q)
    return qs


def brute_force(objects, queries, k, min_count=0):
    """MC(Q, O) = sum over items of weight * |keywords of O in [lo, hi]|, top-k by (-count, id)."""
    sets = [np.unique(np.asarray(o, np.int64)) for o in objects]
    counts = np.full((len(queries), k), -1, np.int32)
    ids = np.full((len(queries), k), -1, np.int64)
    for qi, q in enumerate(queries):
        mc = np.array([sum(w * int(((s >= lo) & (s <= hi)).sum()) for lo, hi, w in q) for s in sets])
        order = sorted((i for i in range(len(sets)) if mc[i] >= max(min_count, 1)), key=lambda i: (-mc[i], i))[:k]
        counts[qi, :len(order)] = mc[order]
        ids[qi, :len(order)] = order
    return counts, ids


def query_line(q):
    return " ".join(f"{lo}-{hi}:{w}" for lo, hi, w in q)


def cli_search(path, queries, k, tmp_path, min_count=0):
    qf = write_lines(tmp_path / "q.txt", [query_line(q) for q in queries])
    rows = tsv(cli("search", "-q", "-b", "cpu", "-k", k, "-m", min_count, path, qf))
    return hits_to_arrays(rows, len(queries), k, 4, np.int32, -1)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(42)
    objects = random_objects(rng)
    queries = random_queries(rng)
    src = write_lines(tmp_path / "objects.txt", [" ".join(map(str, o)) for o in objects])
    cli("build", "-q", "-o", tmp_path / "cli.genie", src)
    return objects, queries


def test_round_trip_equals_cli_and_brute_force(data, tmp_path, genie_bin):
    objects, queries = data
    with genie.build_keywords(objects, tmp_path / "py.genie") as idx:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        for k, mc in ((1, 0), (7, 0), (10, 3)):
            counts, ids = idx.search(queries, k=k, min_count=mc, backend=backend())
            assert counts.shape == ids.shape == (len(queries), k)
            assert counts.dtype == np.int32 and ids.dtype == np.int64
            c_cli, i_cli = cli_search(tmp_path / "py.genie", queries, k, tmp_path, mc)
            np.testing.assert_array_equal(ids, i_cli)
            np.testing.assert_array_equal(counts, c_cli)
            c_bf, i_bf = brute_force(objects, queries, k, mc)
            np.testing.assert_array_equal(ids, i_bf)
            np.testing.assert_array_equal(counts, c_bf)


def test_object_forms_give_one_index(data, tmp_path):
    objects, _ = data
    indptr = np.zeros(len(objects) + 1, np.int64)
    indptr[1:] = np.cumsum([len(o) for o in objects])
    indices = np.concatenate([np.asarray(o, np.uint32) for o in objects])
    genie.build_keywords((indptr, indices), tmp_path / "csr.genie").close()
    genie.build_keywords((indptr.astype(np.int32), indices.astype(np.int64)), tmp_path / "csr2.genie").close()
    cli_bytes = (tmp_path / "cli.genie").read_bytes()
    assert (tmp_path / "csr.genie").read_bytes() == cli_bytes
    assert (tmp_path / "csr2.genie").read_bytes() == cli_bytes
    dense = np.arange(30).reshape(10, 3)
    with genie.build_keywords(dense, tmp_path / "dense.genie") as idx:
        assert idx.info["n_objects"] == 10 and idx.info["n_postings"] == 30


def test_query_forms_agree(data, tmp_path):
    objects, queries = data
    idx = genie.build_keywords(objects, tmp_path / "py.genie")
    ref = idx.search(queries, k=5)
    # structured arrays, (n, 3) arrays, CSR of a structured array
    structured = [np.array(q, dtype=genie.ITEM_DTYPE) for q in queries]
    np.testing.assert_array_equal(idx.search(structured, k=5)[1], ref[1])
    arrays = [np.array(q, dtype=np.int64).reshape(-1, 3) for q in queries]
    np.testing.assert_array_equal(idx.search(arrays, k=5)[1], ref[1])
    indptr = np.cumsum([0] + [len(q) for q in queries])
    items = np.concatenate(structured)
    np.testing.assert_array_equal(idx.search((indptr, items), k=5)[0], ref[0])
    # plain keywords: a list, a 1-D array, a row of a 2-D array, (lo, hi) pairs
    kw = [[3, 7, 9], [1], []]
    ref2 = idx.search(kw, k=4)
    np.testing.assert_array_equal(idx.search([np.array(q, np.uint32) for q in kw], k=4)[1], ref2[1])
    np.testing.assert_array_equal(idx.search([[(3, 3), (7, 7, 1), 9], [(1, 1)], []], k=4)[1], ref2[1])
    np.testing.assert_array_equal(idx.search(np.array([[3, 7, 9]]), k=4)[1], ref2[1][:1])
    idx.close()


def test_fewer_than_k_and_labels(tmp_path):
    objects = [[1, 2], [2, 3], [3]]
    labels = [10, 2**64 - 1, 7]
    src = write_lines(tmp_path / "l.txt", [f"{lab} " + " ".join(map(str, o)) for lab, o in zip(labels, objects)])
    cli("build", "-q", "--labels", "-o", tmp_path / "cli.genie", src)
    with genie.build_keywords(objects, tmp_path / "l.genie", labels=np.array(labels, np.uint64)) as idx:
        assert (tmp_path / "l.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        counts, ids = idx.search([[(1, 1, 5), 2, (3, 3, 3)], [99]], k=5)
        np.testing.assert_array_equal(ids, [[0, 1, 2, -1, -1], [-1] * 5])
        np.testing.assert_array_equal(counts, [[6, 4, 3, -1, -1], [-1] * 5])
        assert [idx.label(i) for i in range(3)] == labels
        np.testing.assert_array_equal(idx.labels(ids[0]), [10, -1, 7, -1, -1])  # int64: 2^64-1 reads -1
        assert idx.info["has_labels"] is True
        rows = tsv(cli("search", "-q", "-k", 5, tmp_path / "l.genie", stdin="1:5 2 3:3\n"))
        assert [int(r[3]) for r in rows] == [idx.label(i) for i in ids[0, :3]]


def test_parts_same_answers(data, tmp_path):
    objects, queries = data
    one = genie.build_keywords(objects, tmp_path / "one.genie")
    parts = genie.build_keywords(objects, tmp_path / "parts.genie", part_objects=97)
    assert len(parts.info["parts"]) == 5
    st = {}
    for a, b in zip(one.search(queries, k=8, backend=backend()),
                    parts.search(queries, k=8, backend=backend(), stats=st)):
        np.testing.assert_array_equal(a, b)
    assert st["n_parts"] == 5 and st["backend"] == backend() and st["total_seconds"] >= 0
    st = {}
    one.search(queries, k=8, backend="auto", stats=st)
    assert st["backend"] == ("cuda" if genie.cuda_available() else "cpu")
