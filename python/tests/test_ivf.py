"""Inverted files from Python like Faiss's IndexIVFFlat / IndexIVFPQ:
VectorIndex.build(xb, path, ivf=..., pq=..., refine=...) writes the file
`genie build --ivf` writes, byte for byte, and search(xq, k, nprobe=...)
returns (D, I) as `genie search --nprobe` answers; with every list probed
IVF-Flat is the exact k-NN computed here with numpy; an index in parts
answers as the one without; options an index's kind does not take are
refused."""
import numpy as np
import pytest

import genie
from conftest import backend, cli, hits_to_arrays, tsv


@pytest.fixture(scope="module")
def clustered(tmp_path_factory):
    d = tmp_path_factory.mktemp("ivf")
    rng = np.random.default_rng(28)
    centres = rng.standard_normal((24, 16)) * 4
    xb = (centres[rng.integers(0, 24, 2000)] + rng.standard_normal((2000, 16))).astype(np.float32)
    xq = (centres[rng.integers(0, 24, 50)] + rng.standard_normal((50, 16))).astype(np.float32)
    np.save(d / "xb.npy", xb)
    np.save(d / "xq.npy", xq)
    return d, xb, xq


def cli_search(path, xq_path, nq, k, *opts):
    rows = tsv(cli("search", "-q", "-b", "cpu", "-k", k, *opts, path, xq_path))
    return hits_to_arrays(rows, nq, k, 3, np.float64, np.inf)


@pytest.mark.parametrize("metric,pq,refine,cli_pq", [
    ("l2", None, False, []),
    ("ip", None, False, []),
    ("cosine", "4x6", True, ["--pq", "4x6", "--refine"]),
    ("l2", (8, 5), False, ["--pq", "8x5"]),
])
def test_build_search_equal_cli(clustered, tmp_path, metric, pq, refine, cli_pq):
    d, xb, xq = clustered
    cli("build", "-q", "-t", "vectors", "--metric", metric, "--ivf", 32, *cli_pq, "--seed", 4, "--backend", "cpu",
        "-o", tmp_path / "cli.genie", d / "xb.npy")
    with genie.VectorIndex.build(xb, tmp_path / "py.genie", metric=metric, ivf=32, pq=pq, refine=refine, seed=4,
                                 backend="cpu") as index:
        assert (tmp_path / "py.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
        iv = index.ivf
        assert iv["nlist"] == 32 and iv["metric"] == metric and iv["refine"] == refine
        assert iv["pq_m"] == (0 if pq is None else pq[0] if isinstance(pq, tuple) else 4)
        assert index.metric == metric and index.d == 16 and len(index) == 2000
        for nprobe in (None, 1, 5):
            st = {}
            D, I = index.search(xq, 10, nprobe=nprobe, backend=backend(), stats=st)
            assert D.shape == I.shape == (50, 10) and D.dtype == np.float32 and I.dtype == np.int64
            assert st["nprobe"] == (nprobe or iv["default_nprobe"]) and st["backend"] == backend()
            D_cli, I_cli = cli_search(tmp_path / "cli.genie", d / "xq.npy", 50, 10,
                                      *([] if nprobe is None else ["--nprobe", nprobe]))
            np.testing.assert_array_equal(I, I_cli)
            np.testing.assert_allclose(D, D_cli, rtol=1e-5, atol=1e-6)
        if pq is not None:  # the refinement depth is candidates, as -K
            D, I = index.search(xq, 5, nprobe=3, candidates=40, backend=backend())
            np.testing.assert_array_equal(I, cli_search(tmp_path / "cli.genie", d / "xq.npy", 50, 5,
                                                        "--nprobe", 3, "-K", 40)[1])


def test_every_list_probed_is_exact(clustered, tmp_path):
    _, xb, xq = clustered
    with genie.VectorIndex.build(xb, tmp_path / "f.genie", ivf=20, backend="cpu") as index:
        D, I = index.search(xq, 7, nprobe=20, backend=backend())
        dist = np.sqrt(((xq[:, None, :].astype(np.float64) - xb[None, :, :]) ** 2).sum(-1))
        I_true = np.argsort(dist, axis=1, kind="stable")[:, :7]
        np.testing.assert_array_equal(I, I_true)
        np.testing.assert_allclose(D, np.take_along_axis(dist, I_true, 1), rtol=1e-5)
        D_exact, I_exact = index.search(xq, 7, exact=True, backend=backend())
        np.testing.assert_array_equal(I, I_exact)


def test_parts_answer_as_one_part(clustered, tmp_path):
    _, xb, xq = clustered
    kw = dict(ivf=24, pq="4", refine=True, seed=2, backend="cpu")
    with genie.VectorIndex.build(xb, tmp_path / "one.genie", **kw) as one, \
            genie.VectorIndex.build(xb, tmp_path / "parts.genie", part_objects=600, **kw) as parts:
        assert len(parts.info["parts"]) == 4
        for nprobe in (2, 6):
            D1, I1 = one.search(xq, 10, nprobe=nprobe, backend=backend())
            D2, I2 = parts.search(xq, 10, nprobe=nprobe, backend=backend())
            np.testing.assert_array_equal(I1, I2)
            np.testing.assert_array_equal(D1, D2)


def test_recall_target_and_refusals(clustered, tmp_path):
    _, xb, xq = clustered
    with genie.VectorIndex.build(xb, tmp_path / "f.genie", ivf=32, backend="cpu") as index:
        st = {}
        D, I = index.search(xq, 10, recall=0.95, backend=backend(), stats=st)
        assert 1 <= st["nprobe"] <= 32 and st["recall_estimate"] >= 0.95
        _, I_true = index.search(xq, 10, exact=True)
        assert genie.eval_recall(I, I_true)["k_recall_at_k"] >= 0.92
        for bad, msg in ((dict(nprobe=33), "nprobe = 33"), (dict(radius=1), "no buckets"),
                         (dict(candidates=20), "exact already"), (dict(nprobe=2, recall=0.9), "chooses nprobe"),
                         (dict(nprobe=0), "nprobe must be")):
            with pytest.raises(genie.InvalidArgumentError, match=msg):
                index.search(xq, 10, **bad)
        with pytest.raises(genie.InvalidArgumentError):
            index.params  # an inverted file has no LSH parameters
    with genie.VectorIndex.build(xb, tmp_path / "l.genie", m=16) as lsh:
        assert lsh.ivf is None
        with pytest.raises(genie.InvalidArgumentError, match="LSH index has no lists"):
            lsh.search(xq, 10, nprobe=2)
    for bad, msg in ((dict(pq=4), "go with ivf"), (dict(ivf=8, m=16), "LSH's"), (dict(ivf=8, pq="4y2"), "pq must be"),
                     (dict(ivf=8, pq=5), "divide"), (dict(ivf=8, metric="l1"), "l2, ip or cosine"),
                     (dict(ivf=3000), "nlist"), (dict(precision="tf32"), "go with ivf"),
                     (dict(ivf=8, precision="fp16"), "fp32 or tf32"), (dict(ivf=8, precision="tf33"), "precision")):
        with pytest.raises(genie.InvalidArgumentError, match=msg):
            genie.VectorIndex.build(xb, tmp_path / "bad.genie", **bad)
