#!/usr/bin/python3
"""The k-NN graph of a set of vectors (every vector's k nearest others):
`genie knn-graph` against Faiss's CPU brute force on the same vectors, the
same cores and the same number of threads, in one run (docs/BENCHMARKS.md,
"k-NN graph").

  bench/knn_graph_faiss.py GENIE DATA K THREADS WORKDIR [--metric l2|cosine]
                           [--limit N] [--repeat R] [--backend B]

With THREADS = 1 run it under OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 so
that neither library's BLAS starts threads of its own.

DATA: a vector file numpy reads here (.fvecs, .npy), or gen:N,D,C: N
vectors of D dimensions around C centres (centre ~ N(0, 3^2 I), vector =
centre + N(0, I), numpy's generator seeded by 28: bench/faiss_ivf.py's
clustered set).  --limit N keeps the first N vectors.  The vectors are
written to WORKDIR/base.npy, which both read.

genie: `genie build -t vectors -m 1 --no-recall-estimate` (an index that
holds the vectors; its LSH function is not used; the build is reported,
not counted), then `genie knn-graph -k K -b B -j THREADS -q` writing
WORKDIR/genie.ivecs, timed from outside (the whole command: opening the
index, the graph, writing the file).  Faiss: IndexFlatL2 (l2) or
IndexFlatIP over unit vectors (cosine), add, search of the base against
itself for k + 1 with omp_set_num_threads(THREADS), each vector left out
of its own row (else the (k + 1)-th dropped), timed around add and search.
The two run alternately, R times each (default 1): each run's wall
seconds, its CPU seconds (user + system: the command's, Faiss's process's)
and the load average are printed (the machine is shared), then the median
of each, and the two graphs compared: the share of rows with the same
ids, and each graph's recall@k against the other counting a neighbour as
found when its true distance (float64) is within 1e-6 (relative) of the
other's k-th (so ties at the k-th distance count as found).
"""
import os
import resource
import statistics
import subprocess
import sys
import time

import faiss
import numpy as np


def arg(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def cpu_seconds(who):
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def load(data, limit):
    if data.startswith("gen:"):
        n, d, c = map(int, data[4:].split(","))
        rng = np.random.default_rng(28)
        centres = (3 * rng.standard_normal((c, d))).astype(np.float32)
        x = (centres[rng.integers(0, c, n)] + rng.standard_normal((n, d))).astype(np.float32)
    elif data.endswith(".npy"):
        x = np.load(data).astype(np.float32)
    else:
        raw = np.fromfile(data, dtype=np.int32)
        d = int(raw[0])
        x = raw.reshape(-1, d + 1)[:, 1:].view(np.float32)
    return np.ascontiguousarray(x[:limit] if limit else x)


def true_distances(x, ids, metric):
    """float64 distances from every row's vector to its neighbours ids (rows x k)."""
    out = np.empty(ids.shape, dtype=np.float64)
    for s in range(0, len(x), 4096):
        a = x[s:s + 4096].astype(np.float64)
        b = x[ids[s:s + 4096]].astype(np.float64)
        if metric == "l2":
            out[s:s + 4096] = np.sqrt(((b - a[:, None, :]) ** 2).sum(-1))
        else:
            na = np.linalg.norm(a, axis=1)[:, None]
            nb = np.linalg.norm(b, axis=2)
            dot = (b * a[:, None, :]).sum(-1)
            out[s:s + 4096] = np.where((na == 0) | (nb == 0), 1.0, 1 - dot / np.maximum(na * nb, 1e-300))
    return out


def recall(x, got, ref, metric):
    """Share of got's neighbours within the reference's k-th true distance (ties count)."""
    dg, dr = true_distances(x, got, metric), true_distances(x, ref, metric)
    kth = dr.max(axis=1, keepdims=True)
    return float(np.mean(dg <= kth + 1e-6 * np.maximum(np.abs(kth), 1)))


def main():
    genie, data, k, threads, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    metric = arg("--metric", "l2")
    limit, repeat, backend = int(arg("--limit", "0")), int(arg("--repeat", "1")), arg("--backend", "cpu")
    os.makedirs(work, exist_ok=True)
    x = load(data, limit)
    n, d = x.shape
    np.save(f"{work}/base.npy", x)
    print(f"data: {data} {n} x {d}, {metric}, k {k}, {threads} threads, genie -b {backend}, "
          f"faiss {faiss.__version__}", flush=True)

    t = time.perf_counter()
    subprocess.run([genie, "build", "-q", "-t", "vectors", "--metric", metric, "-m", "1", "--no-recall-estimate",
                    "-o", f"{work}/graph.genie", f"{work}/base.npy"], check=True)
    print(f"genie build (the index holding the vectors; not counted): {time.perf_counter() - t:.1f} s", flush=True)

    faiss.omp_set_num_threads(threads)
    xf = x
    if metric == "cosine":
        norms = np.linalg.norm(x, axis=1, keepdims=True)
        xf = np.ascontiguousarray(x / np.where(norms == 0, 1, norms), dtype=np.float32)
    tGenie, tFaiss = [], []
    for r in range(repeat):
        t, c = time.perf_counter(), cpu_seconds(resource.RUSAGE_CHILDREN)
        subprocess.run([genie, "knn-graph", "-q", "-k", str(k), "-b", backend, "-j", str(threads), "-o",
                        f"{work}/genie.ivecs", f"{work}/graph.genie"], check=True)
        tGenie.append(time.perf_counter() - t)
        cGenie = cpu_seconds(resource.RUSAGE_CHILDREN) - c
        t, c = time.perf_counter(), cpu_seconds(resource.RUSAGE_SELF)
        index = faiss.IndexFlatL2(d) if metric == "l2" else faiss.IndexFlatIP(d)
        index.add(xf)
        _, ids = index.search(xf, k + 1)
        tFaiss.append(time.perf_counter() - t)
        cFaiss = cpu_seconds(resource.RUSAGE_SELF) - c
        del index
        print(f"run {r + 1}: genie {tGenie[-1]:.2f} s ({cGenie:.2f} s of CPU), faiss {tFaiss[-1]:.2f} s "
              f"({cFaiss:.2f} s of CPU); load average {os.getloadavg()[0]:.1f}", flush=True)

    self_at = ids == np.arange(n)[:, None]
    keep = ~self_at
    keep[~self_at.any(axis=1), k] = False  # rows without themselves: drop the (k + 1)-th
    faiss_ids = ids[keep].reshape(n, k)
    genie_ids = np.fromfile(f"{work}/genie.ivecs", dtype=np.int32).reshape(n, -1)[:, 1:]
    assert genie_ids.shape == (n, k) and not (genie_ids == np.arange(n)[:, None]).any()
    same = float(np.mean((genie_ids == faiss_ids).all(axis=1)))
    g, f = statistics.median(tGenie), statistics.median(tFaiss)
    print(f"median of {repeat}: genie {g:.2f} s, faiss {f:.2f} s: genie takes {g / f:.2f}x faiss's time")
    print(f"agreement: {same:.4f} of rows the same ids; genie recall@{k} against faiss "
          f"{recall(x, genie_ids, faiss_ids, metric):.4f}, faiss against genie {recall(x, faiss_ids, genie_ids, metric):.4f} "
          f"(ties at the k-th distance count)")
    os.remove(f"{work}/graph.genie")


if __name__ == "__main__":
    main()
