"""Vectors like Faiss: (distances, ids) of shape (nq, k), float32 and int64,
checked against the genie command on the same .npy files and against an
exact k-NN computed here with numpy."""
import numpy as np
import pytest

import genie
from conftest import backend, cli, hits_to_arrays, tsv


@pytest.fixture(scope="module")
def vecs(tmp_path_factory):
    d = tmp_path_factory.mktemp("vectors")
    rng = np.random.default_rng(5)
    xb = rng.standard_normal((3000, 24)).astype(np.float32)
    xq = rng.standard_normal((60, 24)).astype(np.float32)
    np.save(d / "xb.npy", xb)
    np.save(d / "xq.npy", xq)
    return d, xb, xq


def numpy_knn(xb, xq, k, metric):
    if metric == "l2":
        dist = np.sqrt(((xq[:, None, :].astype(np.float64) - xb[None, :, :]) ** 2).sum(-1))
    elif metric == "l1":
        dist = np.abs(xq[:, None, :].astype(np.float64) - xb[None, :, :]).sum(-1)
    else:
        nb = xb / np.linalg.norm(xb, axis=1, keepdims=True)
        nq = xq / np.linalg.norm(xq, axis=1, keepdims=True)
        dist = 1 - nq.astype(np.float64) @ nb.T.astype(np.float64)
    ids = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return np.take_along_axis(dist, ids, 1), ids


def cli_search(path, xq_path, nq, k, *opts):
    rows = tsv(cli("search", "-q", "-b", "cpu", "-k", k, *opts, path, xq_path))
    return hits_to_arrays(rows, nq, k, 3, np.float64, np.inf)


@pytest.mark.parametrize("metric,extra", [("l2", {}), ("l1", {"buckets": 512}), ("cosine", {"bits": 6})])
def test_build_search_equals_cli(vecs, tmp_path, metric, extra):
    d, xb, xq = vecs
    args = ["build", "-q", "-t", "vectors", "--metric", metric, "-m", 40, "--seed", 3]
    for key, v in extra.items():
        args += [f"--{key}", v]
    cli(*args, "-o", tmp_path / "cli.genie", d / "xb.npy")
    with genie.VectorIndex.build(xb, tmp_path / "py.genie", metric=metric, m=40, seed=3, **extra) as index:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        assert index.metric == metric and index.d == 24 and len(index) == 3000
        for exact, opts in ((False, ["-K", 50]), (True, ["--exact"])):
            D, I = index.search(xq, 10, exact=exact, candidates=None if exact else 50, backend=backend())
            assert D.shape == I.shape == (60, 10) and D.dtype == np.float32 and I.dtype == np.int64
            D_cli, I_cli = cli_search(tmp_path / "cli.genie", d / "xq.npy", 60, 10, *opts)
            np.testing.assert_array_equal(I, I_cli)
            np.testing.assert_allclose(D, D_cli, rtol=1e-5, atol=1e-6)
        D_true, I_true = numpy_knn(xb, xq, 10, metric)
        st = {}
        D, I = index.search(xq, 10, exact=True, backend=backend(), stats=st)
        assert st["backend"] == backend()
        np.testing.assert_array_equal(I, I_true)
        np.testing.assert_allclose(D, D_true, rtol=1e-4, atol=1e-4)


def test_eval_recall_equals_cli(vecs, tmp_path):
    d, xb, xq = vecs
    index = genie.VectorIndex.build(xb, tmp_path / "v.genie", m=60, seed=1)
    D, I = index.search(xq, 10, candidates=100, radius=1, backend=backend())
    D_true, I_true = index.search(xq, 10, exact=True, backend=backend())
    got = genie.eval_recall(I, I_true, distances=D, true_distances=D_true)
    out = dict(line.split(": ") for line in
               cli("eval", "-b", "cpu", "-k", 10, "-K", 100, "-r", 1, tmp_path / "v.genie", d / "xq.npy").splitlines())
    assert got["k_recall_at_k"] == pytest.approx(float(out["k_recall_at_k"]), abs=5e-5)
    assert got["one_recall_at_k"] == pytest.approx(float(out["one_recall_at_k"]), abs=5e-5)
    assert got["ratio"] == pytest.approx(float(out["ratio"]), abs=5e-5)
    assert genie.eval_recall(I_true, I_true)["k_recall_at_k"] == 1.0
    index.close()


def test_dtypes_and_layouts_converted(vecs, tmp_path):
    d, xb, xq = vecs
    index = genie.VectorIndex.build(xb.astype(np.float64), tmp_path / "v.genie", m=30)
    ref = index.search(xq, 5, exact=True)
    for variant in (xq.astype(np.float64), np.asfortranarray(xq), xq[:, ::-1][:, ::-1], xq.tolist()):
        D, I = index.search(variant, 5, exact=True)
        np.testing.assert_array_equal(I, ref[1])
    ints = np.arange(48).reshape(2, 24)
    assert index.search(ints, 3, exact=True)[1].shape == (2, 3)
    # the base as stored, a read-only view
    base = index.base()
    np.testing.assert_array_equal(base, xb)
    assert not base.flags.writeable
    index.close()


def test_fewer_than_k_and_k_above_n(tmp_path):
    xb = np.eye(4, 8, dtype=np.float32)
    index = genie.VectorIndex.build(xb, tmp_path / "e.genie", m=8)
    D, I = index.search(xb[:2], 6, exact=True)
    assert (I[:, 4:] == -1).all() and np.isinf(D[:, 4:]).all()
    assert I[0, 0] == 0 and I[1, 0] == 1
    D, I = index.search(np.zeros((0, 8), np.float32), 3)
    assert D.shape == (0, 3) and I.shape == (0, 3)
    index.close()


def test_read_vectors_matches_numpy(vecs):
    d, xb, _ = vecs
    np.testing.assert_array_equal(genie.read_vectors(d / "xb.npy"), xb)


def test_open_picks_the_class(vecs, tmp_path):
    _, xb, _ = vecs
    genie.VectorIndex.build(xb[:100], tmp_path / "v.genie", m=8).close()
    genie.build_keywords([[1]], tmp_path / "k.genie").close()
    with genie.open(tmp_path / "v.genie") as v, genie.open(tmp_path / "k.genie") as k:
        assert type(v) is genie.VectorIndex and type(k) is genie.Index
        assert v.params["m"] == 8 and v.info["type"] == "vectors"


def test_exact_precision_same_answers(vecs, tmp_path):
    d, xb, xq = vecs
    with genie.VectorIndex.build(xb, tmp_path / "p.genie", m=20) as index:
        D_ref, I_ref = index.search(xq, 10, exact=True, backend=backend())
        for p in ("fp32", "tf32", "fp16"):
            D, I = index.search(xq, 10, exact=True, precision=p, backend=backend())
            np.testing.assert_array_equal(I, I_ref)
            np.testing.assert_array_equal(D, D_ref)
        with pytest.raises(genie.InvalidArgumentError):
            index.search(xq, 10, precision="tf32")
        with pytest.raises(genie.InvalidArgumentError):
            index.search(xq, 10, exact=True, precision="fp64")
    with genie.VectorIndex.build(xb, tmp_path / "l1.genie", metric="l1", m=20) as index:
        with pytest.raises(genie.InvalidArgumentError, match="l1 has none"):
            index.search(xq, 10, exact=True, precision="fp16")
