"""Fashion-MNIST search in a few lines: an LSH index of the 60,000 training
images, the 10,000 test images as queries, recall against the exact answer.

    scripts/fetch-fashion-mnist
    .venv/bin/python python/examples/fashion_mnist.py [N_QUERIES]
"""
import sys
import time

import genie

xb = genie.read_vectors("data/vectors/train-images-idx3-ubyte.gz")   # (60000, 784) float32
xq = genie.read_vectors("data/vectors/t10k-images-idx3-ubyte.gz")[:int(sys.argv[1]) if len(sys.argv) > 1 else 1000]

index = genie.VectorIndex.build(xb, "/tmp/fashion-mnist.genie", metric="l2")
t = time.perf_counter()
D, I = index.search(xq, 10, candidates=1000, radius=1)               # LSH, re-ranked
print(f"LSH:   {len(xq)} queries in {time.perf_counter() - t:.2f} s")
t = time.perf_counter()
D_true, I_true = index.search(xq, 10, exact=True)                    # exact k-NN
print(f"exact: {len(xq)} queries in {time.perf_counter() - t:.2f} s")
print(genie.eval_recall(I, I_true, distances=D, true_distances=D_true))
