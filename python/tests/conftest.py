"""Shared helpers: the genie command of the same build (the oracle the
package is compared with), the backend under test, TSV parsing."""
import os
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENIE_BIN = os.environ.get("GENIE_BIN", os.path.join(ROOT, "build", "genie"))


def backend():
    """The backend the package is tested on: $GENIE_TEST_BACKEND or cpu.
    The command line always runs on cpu, the reference."""
    return os.environ.get("GENIE_TEST_BACKEND", "cpu")


def cli(*args, stdin=None):
    """Run `genie ARGS`; returns standard output (text); fails the test on a non-zero exit."""
    p = subprocess.run([GENIE_BIN, *map(str, args)], input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        pytest.fail(f"genie {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
    return p.stdout


def tsv(out):
    """TSV lines as lists of fields."""
    return [line.split("\t") for line in out.splitlines() if line]


def hits_to_arrays(rows, nq, k, value_col, dtype, fill):
    """(values, ids) arrays (nq, k) from TSV rows 'query_no rank object ...'."""
    values = np.full((nq, k), fill, dtype)
    ids = np.full((nq, k), -1, np.int64)
    for r in rows:
        q, rank = int(r[0]) - 1, int(r[1]) - 1
        ids[q, rank] = int(r[2])
        values[q, rank] = dtype(r[value_col]) if dtype is not np.float64 else float(r[value_col])
    return values, ids


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8") as f:
        for line in lines:
            f.write(line + "\n")
    return path


@pytest.fixture(scope="session")
def genie_bin():
    if not os.access(GENIE_BIN, os.X_OK):
        pytest.fail(f"{GENIE_BIN} not found: build first (scripts/setup) or set GENIE_BIN")
    return GENIE_BIN
