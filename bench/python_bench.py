"""The Python package against the C API, warm, in one process each:

  1. exact k-NN: VectorIndex.search(xq, k, exact=True) on a vectors index,
     repeated; the C API's figure is `genie eval --exact --repeat N`
     (genie_vectors_search on the open index, the median of N runs), run by
     the caller (scripts/gpu-python) on the same index and queries;
  2. one-query latency: Index.search of one keyword query in an open index,
     repeated (median and 99th percentile), on each backend given.

Prints 'name: value' lines.  Usage:
  python bench/python_bench.py INDEX QUERIES [--k 10] [--repeat 5]
         [--backend auto] [--latency-backends cpu,cuda] [--limit N]
"""
import argparse
import time

import numpy as np

import genie


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("index")
    ap.add_argument("queries")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--latency-backends", default="cpu")
    ap.add_argument("--latency-runs", type=int, default=1000)
    ap.add_argument("--limit", type=int, default=0)
    a = ap.parse_args()

    xq = genie.read_vectors(a.queries)
    if a.limit:
        xq = xq[:a.limit]
    with genie.VectorIndex.open(a.index) as index:
        times, st = [], {}
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            D, I = index.search(xq, a.k, exact=True, backend=a.backend, stats=st)
            times.append(time.perf_counter() - t0)
        print(f"exact_backend_ran: {st['backend']}")
        print(f"exact_library_seconds_last: {st['total_seconds']:.4f}")
        t0 = time.perf_counter()
        genie._convert.float_matrix(xq, "xq", dim=index.d)  # the argument checks alone
        print(f"argument_check_seconds: {time.perf_counter() - t0:.4f}")
        print(f"exact_queries: {len(xq)}")
        print(f"exact_backend: {a.backend}")
        print(f"exact_seconds_first: {times[0]:.4f}")
        print(f"exact_seconds_last: {times[-1]:.4f}")
        print(f"exact_seconds_best_warm: {min(times[1:] or times):.4f}")

    # One keyword query at a time, on an index of the LSH keywords of the
    # same vectors index (any index serves: the match-count engine is one).
    with genie.Index.open(a.index) as idx:
        rng = np.random.default_rng(1)
        m = idx.info["n_keywords"]
        for b in a.latency_backends.split(","):
            lat = []
            for i in range(a.latency_runs + 10):
                q = [sorted(rng.integers(0, max(m, 1), 32).tolist())]
                t0 = time.perf_counter()
                idx.search(q, k=10, backend=b)
                if i >= 10:  # the first ones warm the backend up
                    lat.append(time.perf_counter() - t0)
            lat = np.array(lat) * 1e3
            print(f"one_query_ms_{b}: median {np.median(lat):.3f}, p99 {np.percentile(lat, 99):.3f}, "
                  f"runs {len(lat)}")


if __name__ == "__main__":
    main()
