"""Keyword build + search from Python against the genie command on the
same data: timed and printed, never asserted on time (the answers are
compared).  The default size keeps the suite quick; set
GENIE_PY_BENCH_OBJECTS=1000000 for the 1M x 32 run of docs/PYTHON.md."""
import os
import time

import numpy as np

import genie
from conftest import backend, cli


def test_keywords_python_vs_cli(tmp_path, capsys):
    n = int(os.environ.get("GENIE_PY_BENCH_OBJECTS", "50000"))
    nq = int(os.environ.get("GENIE_PY_BENCH_QUERIES", "1000"))
    L, universe = 32, 100000
    rng = np.random.default_rng(13)
    objects = rng.integers(0, universe, size=(n, L), dtype=np.uint32)
    queries = rng.integers(0, universe, size=(nq, L), dtype=np.uint32)
    np.savetxt(tmp_path / "objects.txt", objects, fmt="%d")
    np.savetxt(tmp_path / "queries.txt", queries, fmt="%d")
    b = backend()

    t0 = time.perf_counter()
    cli("build", "-q", "-o", tmp_path / "cli.genie", tmp_path / "objects.txt")
    t1 = time.perf_counter()
    out = cli("search", "-q", "-b", b, "-k", 10, tmp_path / "cli.genie", tmp_path / "queries.txt")
    t2 = time.perf_counter()

    indptr = np.arange(n + 1, dtype=np.uint64) * L
    t3 = time.perf_counter()
    genie.build_keywords((indptr, objects.reshape(-1)), tmp_path / "py.genie").close()
    t4 = time.perf_counter()
    with genie.Index.open(tmp_path / "py.genie") as idx:
        counts, ids = idx.search(queries, k=10, backend=b)
    t5 = time.perf_counter()

    rows = [line.split("\t") for line in out.splitlines()]
    cli_ids = np.full((nq, 10), -1, np.int64)
    for r in rows:
        cli_ids[int(r[0]) - 1, int(r[1]) - 1] = int(r[2])
    np.testing.assert_array_equal(ids, cli_ids)
    with capsys.disabled():
        print(f"\n  keywords {n} x {L}, {nq} queries x {L}, k 10, backend {b}: "
              f"build python {t4 - t3:.2f} s, cli {t1 - t0:.2f} s ({(t4 - t3) / (t1 - t0):.2f}x); "
              f"open + search python {t5 - t4:.3f} s, cli {t2 - t1:.3f} s ({(t5 - t4) / (t2 - t1):.2f}x)")
