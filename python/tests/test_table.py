"""Tables: rows from a CSV file or from a list of dicts give the index the
genie command builds; query rows with radius and weights answer as
`genie search --radius --weight` does."""
import csv

import numpy as np
import pytest

import genie
from conftest import backend, cli, hits_to_arrays, tsv

COUNTRIES = ["FR", "DE", "IT", "ES", "a, \"quoted\" one"]


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(8)
    rows = []
    for i in range(700):
        rows.append({"name": f"city{i}", "country": COUNTRIES[rng.integers(0, 5)],
                     "lat": round(float(rng.uniform(-60, 70)), 4), "lng": round(float(rng.uniform(-180, 180)), 4),
                     "pop": "" if i % 37 == 0 else int(rng.integers(100, 10**7))})
    path = tmp_path / "t.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path, rows


def test_table_equals_cli(table, tmp_path):
    path, rows = table
    spec = "name,country:cat,lat,lng,pop"
    cli("build", "-q", "-t", "table", "--bins", 256, "--columns", spec, "-o", tmp_path / "cli.genie", path)
    from_file = genie.TableIndex.build(path, tmp_path / "f.genie", columns=spec, bins=256)
    from_rows = genie.TableIndex.build(rows, tmp_path / "r.genie", columns=spec.split(","), bins=256)
    assert (tmp_path / "f.genie").read_bytes() == (tmp_path / "cli.genie").read_bytes()
    assert from_rows.columns == from_file.columns
    assert ("name", "stored") not in from_file.columns and ("country", "categorical") in from_file.columns
    queries = [{"country": "FR", "lat": 48.85, "lng": 2.35}, {"lat": 0, "pop": 5000000},
               {"country": COUNTRIES[4]}, {"country": "nowhere"}]
    qpath = tmp_path / "q.csv"
    with open(qpath, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["country", "lat", "lng", "pop"], lineterminator="\n")
        w.writeheader()
        w.writerows(queries)
    for radius, weight, opts in ((None, None, []), (3, {"country": 2}, ["--radius", 3, "--weight", "country=2"]),
                                 ({"lat": 1, "lng": 1}, 4, ["--radius", "lat=1", "--radius", "lng=1", "--weight", 4])):
        out = cli("search", "-q", "-b", "cpu", "-k", 7, *opts, tmp_path / "cli.genie", qpath)
        c_cli, i_cli = hits_to_arrays(tsv(out), len(queries), 7, 4, np.int32, -1)
        for idx in (from_file, from_rows):
            for q in (queries, qpath):
                counts, ids = idx.search(q, k=7, radius=radius, weight=weight, backend=backend())
                np.testing.assert_array_equal(ids, i_cli)
                np.testing.assert_array_equal(counts, c_cli)
    assert (ids[3] == -1).all()
    # after searches with settings, a search without them has the defaults again
    out = cli("search", "-q", "-b", "cpu", "-k", 7, tmp_path / "cli.genie", qpath)
    np.testing.assert_array_equal(from_rows.search(queries, k=7, backend=backend())[1],
                                  hits_to_arrays(tsv(out), len(queries), 7, 4, np.int32, -1)[1])
    assert from_file.record(0).startswith("city0,")
    from_file.close()
    from_rows.close()


def test_table_bad_rows_named(tmp_path):
    with pytest.raises(genie.InvalidArgumentError, match="rows, written as CSV"):
        genie.TableIndex.build([{"x": 1}, {"x": 2}], tmp_path / "t.genie", columns="x,nosuch")
    with pytest.raises(genie.InvalidArgumentError, match=r"rows\[1\] must be a dict"):
        genie.TableIndex.build([{"x": 1}, [2]], tmp_path / "t.genie")
    idx = genie.TableIndex.build([{"x": 1, "c": "a"}, {"x": 2, "c": "b"}], tmp_path / "t.genie")
    with pytest.raises(genie.InvalidArgumentError, match="nosuch"):
        idx.search([{"nosuch": 1}])
    with pytest.raises(genie.InvalidArgumentError, match="weight"):
        idx.search([{"x": 1}], weight=300)
    counts, ids = idx.search([{"x": 1.0, "c": None}], k=2, radius=0)
    assert ids[0, 0] == 0
    idx.close()
