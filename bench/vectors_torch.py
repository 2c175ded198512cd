#!/usr/bin/env python3
"""PyTorch's exact k-NN baseline for bench/vectors (Johnson et al. (Faiss) style brute force).

Loads the same files as genie (IDX, .npy incl. float16, .fvecs), keeps the
base on the GPU, and answers the queries in batches: scores = q @ x.T
(l2: |x|^2 - 2 q.x; cosine: normalised vectors; l1: torch.cdist p=1), then
torch.topk.  The timed part is query upload + scores + topk + copy of the
ids back to the host, after one warm-up batch; the base upload is timed
separately.  Prints one CSV line in genie eval --csv's columns, with recall
against the ground-truth .ivecs.  --tf32 lets the matrix products use TF32
tensor cores (torch.backends.cuda.matmul.allow_tf32), PyTorch's fast mode;
the backend column then reads torch-tf32.
"""
import argparse, gzip, struct, sys, time
import numpy as np
import torch


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rb") as f:
        raw = f.read()
    if raw[:6] == b"\x93NUMPY":
        import io
        return np.load(io.BytesIO(raw)).astype(np.float32)
    if path.endswith(".fvecs") or path.endswith(".fvecs.gz"):
        d = struct.unpack("<i", raw[:4])[0]
        return np.frombuffer(raw, dtype=np.float32).reshape(-1, d + 1)[:, 1:].copy()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    assert raw[2] == 8, "IDX of bytes expected"
    return np.frombuffer(raw[4 + 4 * ndim:], dtype=np.uint8).reshape(dims[0], -1).astype(np.float32)


def ivecs(path):
    a = np.fromfile(path, dtype=np.int32)
    d = a[0]
    return a.reshape(-1, d + 1)[:, 1:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--metric", choices=["l2", "l1", "cosine"], required=True)
    ap.add_argument("--truth", required=True)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--tf32", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32
    torch.backends.cudnn.allow_tf32 = a.tf32
    x, q = load(a.base), load(a.queries)
    truth = ivecs(a.truth)[:, :a.k]
    dev = torch.device("cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    X = torch.from_numpy(x).to(dev)
    if a.metric == "cosine":
        X = torch.nn.functional.normalize(X, dim=1)
    xn = (X * X).sum(1)
    torch.cuda.synchronize()
    t_base = time.perf_counter() - t0

    def run(qs):
        Q = torch.from_numpy(qs).to(dev, non_blocking=False)
        if a.metric == "l2":
            s = xn[None, :] - 2.0 * (Q @ X.T)
            return torch.topk(s, a.k, dim=1, largest=False).indices
        if a.metric == "cosine":
            s = torch.nn.functional.normalize(Q, dim=1) @ X.T
            return torch.topk(s, a.k, dim=1, largest=True).indices
        s = torch.cdist(Q, X, p=1)
        return torch.topk(s, a.k, dim=1, largest=False).indices

    run(q[:a.batch]).cpu()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    out = [run(q[i:i + a.batch]).cpu().numpy() for i in range(0, len(q), a.batch)]
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    ids = np.concatenate(out)
    rec = np.mean([len(set(ids[i]) & set(truth[i])) / a.k for i in range(len(q))])
    one = np.mean([truth[i][0] in set(ids[i]) for i in range(len(q))])
    name = "torch-tf32" if a.tf32 else "torch"
    print("%s,1,%s,0,%d,0,0,%d,%.4f,%.4f,nan,%.4f,%.1f,0,0,0" % (a.metric, name, a.k, len(q), rec, one, secs,
                                                                 len(q) / secs))
    print("torch: base upload %.3f s, batch %d, %s" % (t_base, a.batch, torch.cuda.get_device_name()), file=sys.stderr)


if __name__ == "__main__":
    main()
