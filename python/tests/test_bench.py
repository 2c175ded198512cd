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

    indptr = np.arange(n + 1, dtype=np.uint64) * L
    t_cli_build = t_cli_search = t_py_build = t_py_search = float("inf")
    for _ in range(2):  # best of two rounds, alternating: the machine may be shared
        t0 = time.perf_counter()
        cli("build", "-q", "-o", tmp_path / "cli.genie", tmp_path / "objects.txt")
        t1 = time.perf_counter()
        out = cli("search", "-q", "-b", b, "-k", 10, tmp_path / "cli.genie", tmp_path / "queries.txt")
        t2 = time.perf_counter()
        genie.build_keywords((indptr, objects.reshape(-1)), tmp_path / "py.genie").close()
        t3 = time.perf_counter()
        with genie.Index.open(tmp_path / "py.genie") as idx:
            counts, ids = idx.search(queries, k=10, backend=b)
        t4 = time.perf_counter()
        t_cli_build, t_cli_search = min(t_cli_build, t1 - t0), min(t_cli_search, t2 - t1)
        t_py_build, t_py_search = min(t_py_build, t3 - t2), min(t_py_search, t4 - t3)

    rows = [line.split("\t") for line in out.splitlines()]
    cli_ids = np.full((nq, 10), -1, np.int64)
    for r in rows:
        cli_ids[int(r[0]) - 1, int(r[1]) - 1] = int(r[2])
    np.testing.assert_array_equal(ids, cli_ids)
    with capsys.disabled():
        print(f"\n  keywords {n} x {L}, {nq} queries x {L}, k 10, backend {b}, best of 2: "
              f"build python {t_py_build:.2f} s, cli {t_cli_build:.2f} s ({t_py_build / t_cli_build:.2f}x); "
              f"open + search python {t_py_search:.3f} s, cli {t_cli_search:.3f} s "
              f"({t_py_search / t_cli_search:.2f}x)")
