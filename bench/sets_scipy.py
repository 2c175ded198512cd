#!/usr/bin/python3
"""The sparse-matrix brute force of exact set similarity, the baseline of
bench/sets_exact_bench.c (docs/BENCHMARKS.md "Exact set similarity").

Load (not timed, like building an index): the sets of BASE as a CSR
incidence matrix B (sets x elements) with the vocabulary, and its
transpose kept as CSR (elements x sets): the product Q @ B^T then runs
CSR x CSR, with no conversion per batch (scipy turns the CSC transpose
into CSR inside every product otherwise).  Timed, end to end: the query
lines parsed and looked up, Q built per batch of queries, C = Q @ B^T
(the shared counts |A n B| of every pair that shares an element),
Jaccard c / (|A| + |B| - c) in float64 for every nonzero, then per query
the top k (argpartition, ties at the k-th value resolved by smaller id,
the same order as genie), or every set at or above --min-similarity.
With -p P the queries are cut into P contiguous slices, one forked
process each (the matrices shared copy-on-write), the same cores as
genie's threads.  The batch (queries per product) is chosen so that a
product holds about --batch-nnz nonzeros (the sum of the queries'
element frequencies bounds it; measured on the first 100 queries), or
given with --batch: large batches spend their time allocating the
product (a 1,000,000-set collection with 500 queries a batch ran 8 times
slower than with 2), small ones in Python.

Usage: sets_scipy.py BASE QUERIES [-k 10] [-n QUERIES] [-p PROCS]
       [--batch N | --batch-nnz 2000000] [--min-similarity T] [--repeat N]
       [--out FILE] [--check GENIE_ANSWERS]
Prints 'scipy: N queries in S s (Q queries/s), P processes, ...'; --out
writes 'query rank object similarity' lines (similarity %.17g); --check
compares them with genie's (bench/sets_exact_bench.c -o): every query,
rank, object and similarity must be equal; prints 'check: identical' or
the first differences and exits 1.
"""
import argparse
import multiprocessing as mp
import sys
import time

import numpy as np
import scipy.sparse as sp

G = {}


def parse(line):
    return dict.fromkeys(line.split())


def load(path, n=None):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines[:n] if n else lines


def base_matrix(lines):
    vocab, ind, ptr = {}, [], [0]
    for line in lines:
        for e in parse(line):
            j = vocab.get(e)
            if j is None:
                j = vocab[e] = len(vocab)
            ind.append(j)
        ptr.append(len(ind))
    b = sp.csr_matrix((np.ones(len(ind), np.int32), np.array(ind, np.int32), np.array(ptr, np.int64)),
                      shape=(len(lines), len(vocab)))
    return vocab, b


def answer(lo, hi):
    """The answers of queries lo .. hi-1: a list of (object ids, similarities) per query."""
    vocab, bt, sizes, k, minsim, batch = G["vocab"], G["bt"], G["sizes"], G["k"], G["minsim"], G["batch"]
    lines = G["queries"]
    out = []
    for b0 in range(lo, hi, batch):
        b1 = min(hi, b0 + batch)
        ind, ptr, qsize = [], [0], []
        for line in lines[b0:b1]:
            els = parse(line)
            qsize.append(len(els))
            ind.extend(j for j in map(vocab.get, els) if j is not None)
            ptr.append(len(ind))
        q = sp.csr_matrix((np.ones(len(ind), np.int32), np.array(ind, np.int32), np.array(ptr, np.int64)),
                          shape=(b1 - b0, bt.shape[0]))
        c = q @ bt
        qs = np.repeat(np.array(qsize, np.int64), np.diff(c.indptr))
        jac = c.data / (qs + sizes[c.indices] - c.data)
        for r in range(b1 - b0):
            a, e = c.indptr[r], c.indptr[r + 1]
            j, o = jac[a:e], c.indices[a:e]
            if minsim > 0:
                keep = j >= minsim
                j, o = j[keep], o[keep]
            if k and len(j) > k:
                kth = np.partition(j, len(j) - k)[len(j) - k]
                keep = j >= kth
                j, o = j[keep], o[keep]
            order = np.lexsort((o, -j))
            if k:
                order = order[:k]
            out.append((o[order], j[order]))
    return out


def run(nproc):
    n = len(G["queries"])
    cuts = [n * i // nproc for i in range(nproc + 1)]
    if nproc == 1:
        return answer(0, n)
    with mp.get_context("fork").Pool(nproc) as pool:
        parts = pool.starmap(answer, [(cuts[i], cuts[i + 1]) for i in range(nproc)])
    return [a for p in parts for a in p]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("queries")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("-n", type=int, default=None, help="the first N queries (cycled when past the file)")
    ap.add_argument("-p", "--procs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=0)
    ap.add_argument("--batch-nnz", type=float, default=2e6)
    ap.add_argument("--min-similarity", type=float, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--check")
    a = ap.parse_args()
    t0 = time.time()
    base = load(a.base)
    vocab, b = base_matrix(base)
    G.update(vocab=vocab, bt=b.T.tocsr(), sizes=np.diff(b.indptr).astype(np.int64), k=a.k,
             minsim=a.min_similarity)
    queries = load(a.queries)
    if a.n:
        queries = [queries[i % len(queries)] for i in range(a.n)]
    G["queries"] = queries
    if not a.batch:
        df = np.diff(G["bt"].indptr)
        est = [sum(int(df[j]) for j in map(vocab.get, parse(line)) if j is not None) for line in queries[:100]]
        a.batch = int(min(1000, max(1, a.batch_nnz / max(1.0, sum(est) / max(1, len(est))))))
    G["batch"] = a.batch
    tLoad = time.time() - t0
    best = None
    for _ in range(a.repeat):
        t1 = time.time()
        res = run(a.procs)
        dt = time.time() - t1
        best = dt if best is None else min(best, dt)
    nHit = sum(len(o) for o, _ in res)
    print(f"scipy: {len(queries)} queries in {best:.3f} s ({len(queries) / best:.1f} queries/s), "
          f"{a.procs} processes, batch {a.batch}, k {a.k}, min-similarity {a.min_similarity}, "
          f"{nHit} answers; load {tLoad:.2f} s ({b.shape[0]} sets, {b.shape[1]} elements, {b.nnz} postings)")
    mine = [f"{qi + 1}\t{r + 1}\t{o[r]}\t{j[r]:.17g}" for qi, (o, j) in enumerate(res) for r in range(len(o))]
    if a.out:
        with open(a.out, "w") as f:
            f.write("".join(line + "\n" for line in mine))
    if a.check:
        with open(a.check) as f:
            theirs = f.read().splitlines()
        bad = [(x, y) for x, y in zip(mine, theirs) if x != y]
        if bad or len(mine) != len(theirs):
            print(f"check: MISMATCH: {len(bad)} lines differ, {len(mine)} answers here, {len(theirs)} in {a.check}")
            for x, y in bad[:5]:
                print(f"  scipy {x!r}  genie {y!r}")
            return 1
        print(f"check: identical ({len(mine)} answers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
