#!/usr/bin/env python3
"""Draw recall@10 against queries per second from bench/vectors CSV lines
(rows with k = 10 only).

Usage: vectors_plot.py RESULTS.csv OUT.png
CSV columns: dataset, then genie eval --csv's (metric, exact, backend, m, k,
K, r, queries, k_recall, one_recall, ratio, seconds, qps).
"""
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [r for r in csv.reader(open(sys.argv[1])) if r and not r[0].startswith("#") and r[5] == "10"]
sets = sorted({r[0] for r in rows})
fig, axes = plt.subplots(1, len(sets), figsize=(6 * len(sets), 4.5), squeeze=False)
for ax, ds in zip(axes[0], sets):
    mine = [r for r in rows if r[0] == ds]
    groups = {}
    for r in mine:
        if r[2] == "1":
            label = "exact (%s)" % ("PyTorch" if r[3] == "torch" else "genie " + r[3])
        else:
            label = "GENIE-LSH %s m=%s r=%s" % (r[3], r[4], r[7])
        groups.setdefault(label, []).append((float(r[9]), float(r[13]), r[6]))
    for label, pts in sorted(groups.items()):
        pts.sort()
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        style = "s" if label.startswith("exact") else "o-"
        ax.plot(xs, ys, style, label=label)
        if not label.startswith("exact"):
            for x, y, K in pts:
                ax.annotate("K=%s" % K, (x, y), fontsize=6)
    ax.set_yscale("log")
    ax.set_xlabel("recall@10 (10-recall@10)")
    ax.set_ylabel("queries per second")
    ax.set_title(ds)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6)
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=120)
