#!/usr/bin/env python3
"""PyTorch's k-means loop, the baseline of genie's GPU k-means (docs/BENCHMARKS.md;
Johnson et al. (Faiss) 6.2 compare the same loop): per iteration, the
distances of every point to every centroid as |c|^2 - 2 <x, c> (a matmul per
chunk of 65,536 points), argmin, then the new centroids by index_add_ and
bincount (an empty cluster keeps its centroid).  The data live on the GPU
before the clock starts; 20 iterations are timed, after one warm-up
iteration, in fp32 and with TF32 matmuls.

Data: N points of D dimensions around C centres, drawn the way
bench/ivf_bench.c draws its clustered set (centre ~ N(0, 3^2 I), point =
centre + N(0, I)), by torch's generator (seed 28): the same sizes and
distribution as genie's run, not the same numbers.

  python3 bench/kmeans_torch.py [N] [D] [K] [C]     (defaults 1000000 128 4096 1000)
"""
import sys
import time

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
d = int(sys.argv[2]) if len(sys.argv) > 2 else 128
k = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
nc = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
g = torch.Generator(device="cuda").manual_seed(28)
centres = 3 * torch.randn(nc, d, device="cuda", generator=g)
x = centres[torch.randint(0, nc, (n,), device="cuda", generator=g)] + torch.randn(n, d, device="cuda", generator=g)
init = x[torch.randperm(n, device="cuda", generator=g)[:k]].clone()


def iteration(c):
    cn = (c * c).sum(1)
    a = torch.empty(n, dtype=torch.long, device="cuda")
    for i in range(0, n, 65536):
        a[i:i + 65536] = (cn[None, :] - 2 * x[i:i + 65536] @ c.T).argmin(1)
    sums = torch.zeros_like(c).index_add_(0, a, x)
    counts = torch.bincount(a, minlength=k).to(x.dtype)
    return torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None], c)


for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    c = iteration(init.clone())
    torch.cuda.synchronize()
    t = time.perf_counter()
    c = init.clone()
    for _ in range(20):
        c = iteration(c)
    torch.cuda.synchronize()
    s = time.perf_counter() - t
    print(f"torch-kmeans n={n} dim={d} k={k} iterations=20 {'tf32' if tf32 else 'fp32'}: {s:.3f} s "
          f"({1000 * s / 20:.1f} ms per iteration; data on the GPU, after a warm-up iteration)", flush=True)
