#!/usr/bin/python3
"""genie's CPU IVF-Flat against Faiss's IndexIVFFlat (Debian python3-faiss)
at equal nlist and nprobe, on the same machine with the same number of
threads (docs/BENCHMARKS.md, "Inverted files").

Data: N base and Q query vectors of D dimensions around C centres (centre
~ N(0, 3^2 I), vector = centre + N(0, I), numpy's generator seeded by 28:
the distribution of bench/ivf_bench.c's clustered set), written as .npy.
genie: `genie build -t vectors --ivf NLIST --backend cpu` and `genie eval --nprobe
... -b cpu --threads T --repeat 3` (the last of three searches of all the
queries, on the open index; recall@10 against its exact CPU search, whose
ids are written with --truth-out).  Faiss: IndexIVFFlat(IndexFlatL2, NLIST)
trained on the same number of vectors genie trains on (64 NLIST, from the
base), all vectors added, search of all queries at each nprobe, the last
of three runs as for genie, omp_set_num_threads(T); recall@10 against the
same truth.  BACKEND (default cpu) runs genie's build (its k-means) and
the truth; the timed searches are on the CPU with T threads whatever it
is (on the GPU machine: cuda, to save the minutes the 16 cores would
take, without OpenBLAS there, to train and to compute the truth).

  bench/faiss_ivf.py GENIE N D C Q NLIST T NPROBE[,NPROBE...] DIR [BACKEND]
"""
import os
import subprocess
import sys
import time

import faiss
import numpy as np

genie, n, d, c, nq, nlist, threads = sys.argv[1], *map(int, sys.argv[2:8])
probes = [int(p) for p in sys.argv[8].split(",")]
work = sys.argv[9]
backend = sys.argv[10] if len(sys.argv) > 10 else "cpu"
rng = np.random.default_rng(28)
centres = (3 * rng.standard_normal((c, d))).astype(np.float32)
x = (centres[rng.integers(0, c, n + nq)] + rng.standard_normal((n + nq, d))).astype(np.float32)
xb, xq = x[:n], x[n:]
np.save(f"{work}/base.npy", xb)
np.save(f"{work}/query.npy", xq)
print(f"data: {n} x {d} around {c} centres, {nq} queries; nlist {nlist}; {threads} threads; "
      f"faiss {faiss.__version__}; genie build and truth on {backend}", flush=True)

t = time.perf_counter()
subprocess.run([genie, "build", "-q", "-t", "vectors", "--ivf", str(nlist), "--backend", backend, "-o", f"{work}/ivf.genie",
                f"{work}/base.npy"], check=True)
print(f"genie build: {time.perf_counter() - t:.1f} s", flush=True)
out = subprocess.run([genie, "eval", "-b", "cpu", "--threads", str(threads), "--repeat", "3", "--truth-backend", backend,
                      "--truth-out", f"{work}/gt.ivecs", "--nprobe", ",".join(map(str, probes)),
                      f"{work}/ivf.genie", f"{work}/query.npy"], check=True, capture_output=True, text=True).stdout
rows = {int(r.split()[0]): r.split() for r in out.splitlines() if r and r[0].isdigit()}
gt = np.fromfile(f"{work}/gt.ivecs", dtype=np.int32).reshape(nq, -1)[:, 1:11]

faiss.omp_set_num_threads(threads)
quantizer = faiss.IndexFlatL2(d)
index = faiss.IndexIVFFlat(quantizer, d, nlist)
t = time.perf_counter()
index.train(xb[rng.permutation(n)[:min(n, 64 * nlist)]])
index.add(xb)
print(f"faiss train + add: {time.perf_counter() - t:.1f} s", flush=True)
print("nprobe  genie_recall@10  genie_qps  faiss_recall@10  faiss_qps  genie/faiss")
for p in probes:
    index.nprobe = p
    for _ in range(3):
        t = time.perf_counter()
        _, ids = index.search(xq, 10)
        best = time.perf_counter() - t
    recall = np.mean([len(set(ids[i]) & set(gt[i])) / 10 for i in range(nq)])
    g = rows[p]
    print(f"{p:6d}  {float(g[2]):15.4f}  {float(g[4]):9.0f}  {recall:15.4f}  {nq / best:9.0f}  "
          f"{float(g[4]) / (nq / best):11.2f}", flush=True)
os.remove(f"{work}/ivf.genie")
