#!/usr/bin/env python3
"""Compare two `genie search` outputs (query, rank, id, distance per line).

exact mode: distances equal rank by rank within a relative tolerance, ids
equal wherever the first file's distance at that rank is not tied (within
the tolerance) with the rank before or after it.  --identical: the files
must be equal line for line (LSH on CPU vs GPU).  Prints one summary line;
exits 1 on a mismatch.
"""
import sys


def read(path):
    rows = {}
    with open(path) as f:
        for line in f:
            q, r, i, d = line.split("\t")
            rows.setdefault(int(q), []).append((int(i), float(d)))
    return rows


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tol = 1e-3
    a, b = read(args[0]), read(args[1])
    if "--identical" in sys.argv:
        same = open(args[0]).read() == open(args[1]).read()
        print("identical: %s (%d queries, %d vs %d lines)" % (same, len(a), sum(map(len, a.values())),
                                                             sum(map(len, b.values()))))
        return 0 if same else 1
    bad = ties = n = 0
    worst = 0.0
    for q in a:
        ra, rb = a[q], b.get(q, [])
        if len(ra) != len(rb):
            bad += 1
            continue
        for r, ((ia, da), (ib, db)) in enumerate(zip(ra, rb)):
            n += 1
            scale = max(1.0, abs(da))
            worst = max(worst, abs(da - db) / scale)
            if abs(da - db) > tol * scale:
                bad += 1
                continue
            tied = any(0 <= s < len(ra) and s != r and abs(ra[s][1] - da) <= tol * scale for s in (r - 1, r + 1))
            if ia != ib:
                if tied:
                    ties += 1
                else:
                    bad += 1
    print("exact cpu vs gpu: %d ranks, %d mismatches, %d id swaps inside ties, worst relative distance gap %.2e"
          % (n, bad, ties, worst))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
