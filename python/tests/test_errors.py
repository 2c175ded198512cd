"""Bad input raises a genie.Error subclass carrying the library's message;
never a crash."""
import numpy as np
import pytest

import genie


@pytest.fixture
def idx(tmp_path):
    i = genie.build_keywords([[1, 2], [2, 3], [3]], tmp_path / "k.genie")
    yield i
    i.close()


def test_files(tmp_path, idx):
    with pytest.raises(genie.FileIOError, match="nosuch.genie"):
        genie.Index.open(tmp_path / "nosuch.genie")
    (tmp_path / "junk.genie").write_bytes(b"not an index at all, " * 10)
    with pytest.raises(genie.FormatError):
        genie.Index.open(tmp_path / "junk.genie")
    data = bytearray((tmp_path / "k.genie").read_bytes())
    data[len(data) // 2] ^= 0x55
    (tmp_path / "bad.genie").write_bytes(bytes(data))
    with pytest.raises(genie.CorruptIndexError) as e:
        genie.Index.open(tmp_path / "bad.genie")
    assert e.value.status == -30797 and e.value.message and isinstance(e.value, genie.Error)
    with pytest.raises(genie.InvalidArgumentError, match="is a keywords index, not a vectors index"):
        genie.VectorIndex.open(tmp_path / "k.genie")


def test_only_statuses_are_checked():
    # A C function returning a plain int (a count, a flag) must not go
    # through the status check, which would raise on any non-zero value
    # (genie.cuda_available() raised "unknown error" on a GPU machine).
    from genie import _lib
    assert _lib.lib.genie_cuda_available.errcheck is None
    assert _lib.lib.genie_cuda_built.errcheck is None
    assert _lib.lib.genie_index_open.errcheck is not None
    assert isinstance(genie.cuda_available(), bool)


def test_backend_names_from_the_library():
    known = genie.backends()
    assert known[0] == "auto" and {"cpu", "cpu-idx", "cuda", "cuda-spq", "cuda-cpq-paper"} <= set(known)
    usable = genie.backends(usable=True)
    assert "cpu" in usable and set(usable) <= set(known)
    assert ("cuda" in usable) == genie.cuda_available()


def test_library_messages(idx):
    with pytest.raises(genie.InvalidArgumentError, match=r"query 1, item 2: range 5-4 has lo > hi"):
        idx.search([[1, (5, 4)]])
    with pytest.raises(genie.InvalidArgumentError, match=r"query 2, item 1: weight 0 is outside 1..255"):
        idx.search([[1], [(1, 1, 0)]])
    with pytest.raises(genie.InvalidArgumentError, match="backend"):
        idx.search([[1]], backend="quantum")
    if not genie.cuda_available():
        with pytest.raises((genie.NotSupportedError, genie.GPUError)):
            idx.search([[1]], backend="cuda")
    with pytest.raises(genie.InvalidArgumentError):
        genie.VectorIndex.build(np.ones((4, 3), np.float32), "/nonexistent-dir/x.genie", metric="ip")


def test_arguments_refused(idx, tmp_path):
    bad_queries = [
        ([[1.5]], r"queries\[0\]\[0\]"),
        ([[-1]], "outside 0..4294967295"),
        ([[2**32]], "outside 0..4294967295"),
        ([["a"]], r"queries\[0\]\[0\]"),
        ("1 2 3", "not a string"),
        (42, "list of queries"),
        ([[(1, 2, 3, 4)]], r"queries\[0\]\[0\]"),
        ([np.zeros((2, 4), np.uint32)], "ranges are"),
        (np.zeros(3, np.uint32), "must be 2-D"),
        ([np.array([1.0, 2.0])], "must hold integers"),
        ((np.array([0, 5]), np.array([1, 2], np.uint32)), "past the 2 items"),
        ((np.array([0, 2, 1]), np.array([1, 2], np.uint32)), "must not decrease"),
    ]
    for q, msg in bad_queries:
        with pytest.raises(genie.InvalidArgumentError, match=msg):
            idx.search(q)
    for k in (0, -1, 1.5, True, 2**32):
        with pytest.raises(genie.InvalidArgumentError, match="k must be"):
            idx.search([[1]], k=k)
    with pytest.raises(genie.InvalidArgumentError, match="unknown build option 'sublist'"):
        genie.build_keywords([[1]], tmp_path / "x.genie", sublist=3)
    with pytest.raises(genie.InvalidArgumentError, match="2 labels for 1 objects"):
        genie.build_keywords([[1]], tmp_path / "x.genie", labels=[1, 2])
    with pytest.raises(genie.InvalidArgumentError, match="no objects"):
        genie.build_keywords([], tmp_path / "x.genie")


def test_vectors_refused(tmp_path):
    xb = np.random.default_rng(1).standard_normal((50, 4)).astype(np.float32)
    for bad, msg in ((xb[0], "2-D"), (xb.astype(complex), "real numbers"), (np.zeros((0, 4)), "no vectors"),
                     (np.array([["a"] * 4]), "real numbers")):
        with pytest.raises(genie.InvalidArgumentError, match=msg):
            genie.VectorIndex.build(bad, tmp_path / "v.genie")
    nan = xb.copy()
    nan[7, 2] = np.nan
    with pytest.raises(genie.InvalidArgumentError, match=r"base vector 7, component 2 is nan"):
        genie.VectorIndex.build(nan, tmp_path / "v.genie")
    v = genie.VectorIndex.build(xb, tmp_path / "v.genie", m=8)
    inf = xb[:2].copy()
    inf[1, 0] = np.inf
    with pytest.raises(genie.InvalidArgumentError, match=r"query vector 1, component 0 is inf"):
        v.search(inf, 3)
    with pytest.raises(genie.InvalidArgumentError, match="5 dimensions, the index's vectors 4"):
        v.search(np.zeros((2, 5), np.float32), 3)
    with pytest.raises(genie.InvalidArgumentError, match="radius"):
        genie.VectorIndex.build(xb, tmp_path / "c.genie", metric="cosine").search(xb, 2, radius=1)
    with pytest.raises(genie.InvalidArgumentError, match="candidates"):
        v.search(xb, 5, candidates=2)
    big = np.full((2, 4), 1e300)
    with pytest.raises(genie.InvalidArgumentError, match="float32"):
        v.search(big, 2)
    v.close()


def test_closed_index(tmp_path):
    idx = genie.build_keywords([[1]], tmp_path / "c.genie")
    with idx:
        pass
    assert idx.closed
    with pytest.raises(genie.InvalidArgumentError, match="closed"):
        idx.search([[1]])
    idx.close()  # a second close is a no-op
    assert "closed" in repr(idx)


def test_other_types_refuse_bad_input(tmp_path):
    with pytest.raises(genie.InvalidArgumentError, match="one string"):
        genie.TextIndex.build("just one string", tmp_path / "t.genie")
    with pytest.raises(genie.InvalidArgumentError, match=r"strings\[1\] must be str or bytes"):
        genie.SequenceIndex.build(["ab", 3], tmp_path / "s.genie")
    with pytest.raises(genie.InvalidArgumentError, match="gram"):
        genie.SequenceIndex.build(["ab"], tmp_path / "s.genie", gram=65)
    with pytest.raises(genie.InvalidArgumentError, match="white space"):
        genie.SetIndex.build([["a b", "c"]], tmp_path / "s.genie")
    with pytest.raises(genie.InvalidArgumentError, match="separator"):
        genie.SetIndex.build([["a", "c"]], tmp_path / "s.genie", separator="ab")
    s = genie.SequenceIndex.build(["abcd", "abce"], tmp_path / "q.genie")
    with pytest.raises(genie.InvalidArgumentError, match="certify limit 4 is below K = 32"):
        s.search(["abc"], certify=4)
    s.close()


def test_empty_query_batches_answer_empty(tmp_path):
    # A batch of no queries is answered with empty results of the right
    # shape by every front-end, never with an exception from numpy.
    xb = np.random.default_rng(0).standard_normal((50, 8)).astype(np.float32)
    v = genie.VectorIndex.build(xb, tmp_path / "v.genie")
    for kw in ({}, {"exact": True}, {"recall": 0.9}):
        for xq in (np.zeros((0, 8), np.float32), np.zeros((0, 8))):
            d, i = v.search(xq, 5, **kw)
            assert d.shape == (0, 5) and i.shape == (0, 5)
    s = genie.SetIndex.build([["a", "b"], ["b", "c"]], tmp_path / "s.genie")
    assert s.search([], 3)[1].shape == (0, 3)
    t = genie.TextIndex.build(["a b", "b c"], tmp_path / "t.genie")
    assert t.search([], 3)[1].shape == (0, 3)
    k = genie.build_keywords([[1, 2], [2, 3]], tmp_path / "k.genie")
    assert k.search(np.zeros((0, 3), np.uint32), 3)[1].shape == (0, 3)
    assert genie.SequenceIndex.build(["abc", "abd"], tmp_path / "q.genie").search([], 3) == []
    for i in (v, s, t, k):
        i.close()


def test_float64_vectors_are_converted(tmp_path):
    # numpy's default dtype: a float64 file and array give the float32 answers.
    rng = np.random.default_rng(1)
    xb = rng.standard_normal((60, 4))
    np.save(tmp_path / "b64.npy", xb)
    a = genie.read_vectors(tmp_path / "b64.npy")
    assert a.dtype == np.float32 and np.array_equal(a, xb.astype(np.float32))


def test_k_limits_come_from_the_library(tmp_path):
    from genie import _lib as L
    assert L.INDEX_TYPES == ("keywords", "text", "sets", "sequences", "table", "vectors", "docs", "metric")
    assert [L.max_k(t) for t in range(len(L.INDEX_TYPES))] == [
        2**32 - 1, 2**32 - 1, 65536, 65536, 2**32 - 1, 65536, 1000000, 2**32 - 1]
    s = genie.SetIndex.build([["a", "b"], ["b"]], tmp_path / "s.genie")
    sim, ids = s.search([["b"]], k=L.max_k(L.TYPE_SETS), exact=True)
    assert sim.shape == (1, 65536) and list(ids[0, :2]) == [1, 0]
    with pytest.raises(genie.InvalidArgumentError, match=r"k must be an integer 1\.\.65536, not 65537"):
        s.search([["b"]], k=65537)
    s.close()
    q = genie.SequenceIndex.build(["abcd", "abce"], tmp_path / "q.genie")
    with pytest.raises(genie.InvalidArgumentError, match=r"k must be an integer 1\.\.65536, not 65537"):
        q.search(["abc"], k=65537)
    q.close()
