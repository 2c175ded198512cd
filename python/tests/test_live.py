"""Writes and filters from Python (docs/LIVE.md, docs/PYTHON.md), against
the genie command: after index.add / remove / compact the package's
searches equal `genie search` on the same file (a process of its own that
reads the file and its log), filtered or not; the Index holds the
index's lock from its first write to close()."""
import subprocess

import numpy as np
import pytest

import genie
from conftest import GENIE_BIN, backend, cli, hits_to_arrays, tsv


def cli_counts(index_path, queries_text, k, *opts):
    rows = tsv(cli("search", "-q", "-b", "cpu", "-k", k, *opts, index_path, stdin=queries_text))
    nq = queries_text.count("\n")
    return hits_to_arrays(rows, nq, k, 4, np.int32, 0)


def write_numbers(path, values):
    path.write_text(" ".join(str(int(v)) for v in values) + "\n")
    return str(path)


def test_keywords_add_remove_compact_equal_cli(tmp_path):
    rng = np.random.default_rng(7)
    base = [list(rng.integers(0, 40, rng.integers(1, 6))) for _ in range(200)]
    path = str(tmp_path / "k.genie")
    idx = genie.build_keywords(base, path)
    queries = [list(rng.integers(0, 40, 3)) for _ in range(20)]
    qtext = "".join(" ".join(map(str, q)) + "\n" for q in queries)

    def check(*filter_args, **filter_kw):
        counts, ids = idx.search(queries, k=8, backend=backend(), **filter_kw)
        want_counts, want_ids = cli_counts(path, qtext, 8, *filter_args)
        assert (ids == want_ids).all()
        assert (counts[ids >= 0] == want_counts[ids >= 0]).all()

    check()
    labels = idx.add([[1, 2, 3], [5], [39, 38, 1]])
    assert labels.tolist() == [200, 201, 202]
    assert len(idx) == 203
    check()
    mine = idx.add([[2, 2, 7]], labels=[10**12])
    assert mine.tolist() == [10**12]
    with pytest.raises(genie.InvalidArgumentError, match="in use"):
        idx.add([[1]], labels=[10**12])
    assert idx.remove([0, 201, 10**12, 777777]) == 3
    check()
    assert idx.live["added"] == 4 and idx.live["deleted"] == 3
    # Filters: ids as searches print them, labels, a mask; the CLI's options agree.
    ids = [1, 2, 3, 50, 60, 200, 202]
    check("--filter-ids", write_numbers(tmp_path / "ids.txt", ids), filter=ids)
    check("--filter-labels", write_numbers(tmp_path / "l.txt", [3, 4, 202]), filter={"labels": [3, 4, 202]})
    mask = np.zeros(len(idx), bool)
    mask[::3] = True
    check("--filter-ids", write_numbers(tmp_path / "m.txt", np.flatnonzero(mask)), filter=mask)
    # Compaction: new ids, same labels.
    idx.compact()
    assert idx.live["added"] == 0 and len(idx) == 201
    check()
    check("--filter-labels", write_numbers(tmp_path / "l2.txt", [3, 4, 202]), filter={"labels": [3, 4, 202]})
    idx.close()


def test_the_index_holds_the_lock_from_its_first_write(tmp_path):
    path = str(tmp_path / "k.genie")
    (tmp_path / "add.txt").write_text("4 5\n")
    idx = genie.build_keywords([[1], [2]], path)
    assert cli("add", "-q", path, str(tmp_path / "add.txt")) == "2\n"  # no writer yet
    idx.add([[9]])  # its snapshot holds the CLI's write too
    assert len(idx) == 4
    p = subprocess.run([GENIE_BIN, "add", "-q", path, str(tmp_path / "add.txt")], capture_output=True, text=True)
    assert p.returncode == 1 and "is being written by another process" in p.stderr
    idx.close()
    assert cli("add", "-q", path, str(tmp_path / "add.txt")) == "4\n"


def test_other_types_add_and_filter(tmp_path):
    t = genie.TextIndex.build(["the cat sat", "a dog ran", "birds fly"], str(tmp_path / "t.genie"))
    assert t.add(["the cat ran home", "zebra"]).tolist() == [3, 4]
    _, ids = t.search(["cat", "zebra"], k=5)
    assert sorted(ids[0][ids[0] >= 0].tolist()) == [0, 3] and ids[1][0] == 4
    _, ids = t.search(["cat"], k=5, filter=[3])
    assert ids[0][0] == 3 and (ids[0][1:] == -1).all()
    t.close()

    s = genie.SequenceIndex.build(["acgtacgt", "ttttgggg", "acgaacgt"], str(tmp_path / "s.genie"))
    s.add(["acgtacgg"], labels=[99])
    res = s.search(["acgtacgg"], k=1, exact=True)
    assert res[0].hits[0].id == 3 and res[0].hits[0].distance == 0
    res = s.search(["acgtacgg"], k=1, exact=True, filter={"labels": [0]})
    assert res[0].hits[0].id == 0
    s.close()

    xb = np.random.default_rng(1).standard_normal((50, 8), dtype=np.float32)
    v = genie.VectorIndex.build(xb, str(tmp_path / "v.genie"), m=16)
    new = np.ones((2, 8), np.float32) * 9
    assert v.add(new).tolist() == [50, 51]
    _, ids = v.search(new[:1], k=2, exact=True)
    assert ids[0].tolist() == [50, 51]
    _, ids = v.search(new[:1], k=2, exact=True, filter=np.arange(0, 50))
    assert (ids[0] < 50).all()
    v.remove([50])
    _, ids = v.search(new[:1], k=1, exact=True)
    assert ids[0].tolist() == [51]
    v.close()

    tb = genie.TableIndex.build([{"age": 20 + i, "city": ["rome", "oslo"][i % 2]} for i in range(10)],
                                str(tmp_path / "tb.genie"))
    assert tb.add([{"age": 25, "city": "oslo"}, {"city": "rome"}]).tolist() == [10, 11]
    with pytest.raises(genie.InvalidArgumentError, match="not a value the table was built with"):
        tb.add([{"city": "lima"}])
    with pytest.raises(genie.InvalidArgumentError, match="no column"):
        tb.add([{"town": "rome"}])
    _, ids = tb.search([{"age": 25, "city": "oslo"}], k=1, radius=0)
    assert ids[0][0] in (5, 10)
    tb.close()


def test_docs_take_no_writes_but_filters(tmp_path):
    d = genie.DocsIndex.build(["apple bread", "apple cheese", "bread cheese apple"], str(tmp_path / "d.genie"))
    with pytest.raises(genie.NotSupportedError, match="takes no writes"):
        d.add(["apple"])
    scores, records = d.search(["apple"], k=3)
    allowed = [int(records[0][1])]
    scores_f, records_f = d.search(["apple"], k=3, filter=allowed)
    assert records_f[0].tolist() == [allowed[0], -1, -1]
    assert scores_f[0][0] == scores[0][1]  # the collection's statistics: the same score
    with pytest.raises(genie.InvalidArgumentError, match="not an id"):
        d.search(["apple"], k=3, filter=[7])
    d.close()
