#!/usr/bin/python3
# docs_fts5: the docs index type against SQLite FTS5 on the same collection
# and queries (docs/BENCHMARKS.md).  FTS5 answers each query as an AND of
# its words, ranked by bm25() (k1 = 1.2, b = 0.75), ties by rowid = record
# number, on one thread; genie answers the same queries from an index built
# with --alpha 0 (BM25 alone; no stop words, so the document lengths agree)
# on one thread.  Reports queries/s of both (search time only: FTS5's query
# loop, genie's own timing) and how often the top-k record sets are equal,
# by query length.  For one-word queries the two rankings are the same
# function of (tf, document length), so the sets must agree except where
# the tokenizers differ (non-ASCII text); for longer queries the idf
# weights differ (FTS5: ln((N - n + 0.5) / (n + 0.5)), at least 1e-6;
# genie: ln(1 + (N - n + 0.5) / (n + 0.5)), docs/DOCS.md), so the orders
# may differ where the scores are close.  So a second count judges genie's
# top-k by FTS5's own scores: "equal up to ties" when the FTS5 bm25() values
# of genie's k records are, sorted, those of FTS5's top k (within 1e-9
# relative): a different choice among documents FTS5 scores equally (in
# the rounding of either engine) is not a disagreement.
#
# Usage: bench/docs_fts5.py GENIE RECORDS QUERIES K [WORKDIR]
import os
import re
import sqlite3
import subprocess
import sys
import time

genie, records, queries, k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
work = sys.argv[5] if len(sys.argv) > 5 else "/tmp"
WORD = re.compile(r"[A-Za-z0-9\x80-\uffff]+")

db_path = f"{work}/fts5.db"
if os.path.exists(db_path):
    os.unlink(db_path)
db = sqlite3.connect(db_path)
db.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
with open(records, encoding="utf-8", errors="replace") as f:
    db.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)",
                   ((i, line.rstrip("\n")) for i, line in enumerate(f)))
db.commit()

with open(queries, encoding="utf-8", errors="replace") as f:
    qs = [line.rstrip("\n") for line in f]
fts = []
t0 = time.monotonic()
for q in qs:
    words = WORD.findall(q)
    match = " AND ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = db.execute("SELECT rowid, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?",
                      (match, k)).fetchall() if words else []
    fts.append(rows)
fts_secs = time.monotonic() - t0

index = f"{work}/bm25.genie"
subprocess.run([genie, "build", "-q", "-t", "docs", "--alpha", "0", "-o", index, records], check=True)
out = subprocess.run([genie, "search", "-k", str(k), "-j", "1", index, queries], check=True,
                     capture_output=True, text=True)
gen = [[] for _ in qs]
for line in out.stdout.splitlines():
    qno, _rank, rec, _score = line.split("\t")
    gen[int(qno) - 1].append(int(rec))
genie_secs = float(re.search(r"in ([0-9.]+) s", out.stderr).group(1))



def match_of(q):
    return " AND ".join('"' + w.replace('"', '""') + '"' for w in WORD.findall(q))


def close(x, y):
    return abs(x - y) <= 1e-9 * max(1.0, abs(x), abs(y))


def equal_up_to_ties(q, rows, recs):
    """genie's records score, by FTS5's bm25(), as FTS5's own top k do."""
    if len(rows) != len(recs):
        return False
    if set(r for r, _ in rows) == set(recs):
        return True
    marks = ",".join("?" * len(recs))
    got = db.execute(f"SELECT bm25(t) FROM t WHERE t MATCH ? AND rowid IN ({marks})",
                     [match_of(q)] + recs).fetchall()
    a = sorted(s for _, s in rows)
    b = sorted(s for (s,) in got)
    return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))


by_len = {}
for q, a, b in zip(qs, fts, gen):
    n = min(len(WORD.findall(q)), 4)
    same, ties, total = by_len.get(n, (0, 0, 0))
    by_len[n] = (same + (set(r for r, _ in a) == set(b)), ties + equal_up_to_ties(q, a, b), total + 1)
print(f"| {k} | {len(qs) / fts_secs:.0f} | {len(qs) / genie_secs:.0f} | "
      + " | ".join(f"{100.0 * s / t:.1f}% ({100.0 * e / t:.1f}%) of {t}" for n, (s, e, t) in sorted(by_len.items()))
      + " |")
