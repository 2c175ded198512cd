#!/usr/bin/env python3
"""The k-NN graph of a set of vectors (every vector's k nearest others) by
PyTorch on the GPU: the baseline of `genie knn-graph` on the GPU machine
(docs/BENCHMARKS.md, "Inverted files", k-NN graph), run in the same job.

  python3 bench/knn_graph_torch.py DATA K [--metric l2|cosine] [--block B]
                                   [--save OUT.npy] [GRAPH.ivecs ...]

DATA: .npy (or .npy.gz), or gen:N,D,C: N vectors of D dimensions around C
centres (numpy's default_rng(28): centre ~ N(0, 3^2 I), vector = centre +
N(0, I); bench/faiss_ivf.py's and bench/knn_graph_faiss.py's set).
--save writes the generated set as .npy (for genie build) and exits.

The baseline: the base on the GPU, then per block of B rows (default
2,048) one matmul against the whole base (l2: |x|^2 - 2 q.x; cosine: the
rows normalised first, -q.x) and topk(k + 1), each row's own id left out
(else its (k + 1)-th dropped), in fp32 and then with TF32 matmuls: the
seconds of the graph with the base resident (after a warm-up block) and
with its upload and the ids' copy back.  Then every GRAPH.ivecs (genie
knn-graph's files) against the first one given and against PyTorch's fp32
graph: the share of rows with the same ids in the same order, and recall@k
(the share of each row's ids found in the other's row).
"""
import gzip
import sys
import time

import numpy as np
import torch


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def load(data):
    if data.startswith("gen:"):
        n, d, c = map(int, data[4:].split(","))
        rng = np.random.default_rng(28)
        centres = (3 * rng.standard_normal((c, d))).astype(np.float32)
        return (centres[rng.integers(0, c, n)] + rng.standard_normal((n, d))).astype(np.float32)
    with (gzip.open if data.endswith(".gz") else open)(data, "rb") as f:
        return np.load(f).astype(np.float32)


def graph(xb, k, block, metric):
    """ids (n x k, on the device): each row's k nearest others."""
    n = xb.shape[0]
    if metric == "cosine":
        xb = xb / xb.norm(dim=1, keepdim=True).clamp_min(1e-30)
        nb = torch.zeros(n, device=xb.device)
    else:
        nb = (xb * xb).sum(1)
    out = torch.empty((n, k), dtype=torch.int64, device=xb.device)
    for s in range(0, n, block):
        q = xb[s:s + block]
        d = nb[None, :] - (1 if metric == "cosine" else 2) * (q @ xb.T)
        ids = torch.topk(d, k + 1, dim=1, largest=False)[1]
        self_at = ids == torch.arange(s, s + q.shape[0], device=xb.device)[:, None]
        keep = ~self_at
        keep[~self_at.any(1), k] = False
        out[s:s + q.shape[0]] = ids[keep].view(-1, k)
    return out


def same_rows(a, b):
    return float(np.mean((a == b).all(axis=1)))


def recall(got, ref):
    hit = 0
    for s in range(0, len(got), 65536):
        g, r = got[s:s + 65536], ref[s:s + 65536]
        hit += int((g[:, :, None] == r[:, None, :]).any(-1).sum())
    return hit / ref.size


def main():
    data, k = sys.argv[1], int(sys.argv[2])
    metric, block, save = arg("--metric", "l2"), int(arg("--block", "2048")), arg("--save", None)
    x = load(data)
    if save:
        np.save(save, x)
        print(f"saved {x.shape[0]} x {x.shape[1]} to {save}")
        return
    files = [a for a in sys.argv[3:] if a.endswith(".ivecs")]
    n, d = x.shape
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}: {data} {n} x {d}, {metric}, k {k}, "
          f"block {block}", flush=True)
    ref = None
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        xb = torch.from_numpy(x).cuda()
        torch.cuda.synchronize()
        tUp = time.perf_counter() - t0
        graph(xb[:block], min(k, block - 1), block, metric)  # warm-up: kernels, allocator
        torch.cuda.synchronize()
        t = time.perf_counter()
        ids = graph(xb, k, block, metric)
        torch.cuda.synchronize()
        tGraph = time.perf_counter() - t
        t = time.perf_counter()
        ids = ids.cpu().numpy()
        tDown = time.perf_counter() - t
        print(f"torch {'tf32' if tf32 else 'fp32'}: graph {tGraph:.3f} s with the base resident "
              f"({n / tGraph:,.0f} rows/s); {tUp + tGraph + tDown:.3f} s with the upload and the ids back", flush=True)
        if not tf32:
            ref = ids
        else:
            print(f"   torch tf32 against torch fp32: rows the same {same_rows(ids, ref):.4f}, recall@{k} "
                  f"{recall(ids, ref):.4f}")
        del xb
        torch.cuda.empty_cache()
    first = None
    for f in files:
        g = np.fromfile(f, dtype=np.int32).reshape(n, -1)
        assert g.shape[1] == k + 1 and (g[:, 0] == k).all(), f
        g = g[:, 1:].astype(np.int64)
        line = f"{f}: against torch fp32 rows the same {same_rows(g, ref):.4f}, recall@{k} {recall(g, ref):.4f}"
        if first is None:
            first = g
        else:
            line += f"; against {files[0]} rows the same {same_rows(g, first):.4f}, recall@{k} {recall(g, first):.4f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
