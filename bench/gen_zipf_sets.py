#!/usr/bin/python3
"""A generated Zipf collection of sets for the exact set similarity benchmark
(docs/BENCHMARKS.md "Exact set similarity"), reproducible from its seed.

Elements are the ranks 0 .. V-1 of a Zipf law, P(rank r) proportional to
1 / (r + 1)^s, written in base 36.  A set has 1 + round(lognormal) draws
(median --median, sigma 0.7, at most 500), repeats dropped.  One set in
five (after the first thousand) is a near duplicate of an earlier one:
each of its elements kept with probability 0.8, and 1 to 3 fresh draws
added.  The queries are made the same way and never indexed; half of them
are near duplicates of indexed sets.

Usage: gen_zipf_sets.py OUT_BASE OUT_QUERIES [-n 1000000] [-q 10000]
       [-V 1000000] [-s 1.0] [--median 12] [--seed 2026]
"""
import argparse

import numpy as np


def b36(a):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    for x in a.tolist():
        s = ""
        while True:
            s = digits[x % 36] + s
            x //= 36
            if not x:
                break
        out.append(s)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("queries")
    ap.add_argument("-n", type=int, default=1000000)
    ap.add_argument("-q", type=int, default=10000)
    ap.add_argument("-V", type=int, default=1000000)
    ap.add_argument("-s", type=float, default=1.0)
    ap.add_argument("--median", type=float, default=12)
    ap.add_argument("--seed", type=int, default=2026)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    cdf = np.cumsum(1.0 / np.arange(1, a.V + 1) ** a.s)
    cdf /= cdf[-1]
    names = b36(np.arange(a.V))

    def draws(n):
        return np.searchsorted(cdf, rng.random(n), side="right")

    def fresh(count):
        sizes = np.minimum(500, 1 + np.rint(rng.lognormal(np.log(a.median), 0.7, count)).astype(np.int64))
        flat = draws(int(sizes.sum()))
        ends = np.cumsum(sizes)
        return [flat[e - s:e] for s, e in zip(sizes, ends)]

    def near(src):
        kept = src[rng.random(len(src)) < 0.8]
        return np.concatenate([kept, draws(int(rng.integers(1, 4)))])

    def line(x):
        return " ".join(names[i] for i in dict.fromkeys(x.tolist()))

    base = fresh(a.n)
    dup = np.nonzero(rng.random(a.n) < 0.2)[0]
    for i in dup[dup >= 1000]:
        base[i] = near(base[int(rng.integers(0, i))])
    with open(a.base, "w") as f:
        f.write("\n".join(line(x) for x in base) + "\n")
    queries = fresh(a.q)
    for j in range(0, a.q, 2):
        queries[j] = near(base[int(rng.integers(0, a.n))])
    with open(a.queries, "w") as f:
        f.write("\n".join(line(x) for x in queries) + "\n")


if __name__ == "__main__":
    main()
