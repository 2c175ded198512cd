"""genie.TableIndex: rows of a relational table: numeric columns cut into
equal-width bins, categorical ones matched exactly, each indexed column
one attribute (Zhou et al., "GENIE: A Generic Inverted Index Framework
for Similarity Search on the GPU", section V-C; docs/TABLES.md).

Rows come from a CSV or ARFF file, or from a list of dicts (no pandas
needed), which is written to a temporary CSV file for the library; a
missing value (None, NaN, "" or "?") gives no keyword."""
import ctypes
import csv
import io
import math
import os
import tempfile
import threading

from . import _convert, _live
from . import _lib as L
from .errors import Error, InvalidArgumentError
from .index import Index, build_options

lib = L.lib

_CHUNK = 8192


def _cell(v):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    return str(v)


def _header(rows):
    cols = {}
    for i, r in enumerate(rows):
        if not isinstance(r, dict):
            raise InvalidArgumentError(f"rows[{i}] must be a dict of column: value, not {type(r).__name__}")
        for c in r:
            if not isinstance(c, str) or not c:
                raise InvalidArgumentError(f"rows[{i}]: column names must be non-empty strings, not {c!r}")
            cols.setdefault(c, None)
    return list(cols)


def _write_csv(rows, path):
    cols = _header(rows)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_cell(r.get(c)) for c in cols])


def _columns_spec(columns):
    if columns is None:
        return None
    if isinstance(columns, str):
        return columns.encode()
    return ",".join(columns).encode()


class TableIndex(Index):
    """An index of table rows (type 'table')."""

    _type = L.TYPE_TABLE

    def __init__(self, handle, path):
        super().__init__(handle, path)
        self._t = None
        self._tuned = False  # _t holds radius or weight settings of a search
        self._table_lock = threading.Lock()

    @classmethod
    def build(cls, rows, path, columns=None, bins=1024, store_records=True, **opts):
        """Index @rows (a CSV or ARFF file path, or a list of dicts) at @path
        and open it.  columns: None = all, or "name[:num|:cat],..." (or a
        list of such names) to index; bins: per numeric column (1..16777216);
        store_records: keep each row as CSV (record(id)).  opts: the build
        options."""
        to = L.genie_table_options()
        to.bins = _convert.count(bins, "bins", 1, 16777216)
        to.columns = _columns_spec(columns)
        to.no_records = 0 if store_records else 1
        bo = build_options(opts)
        if isinstance(rows, (str, bytes, os.PathLike)):
            lib.genie_table_build(os.fsencode(rows), ctypes.byref(to), ctypes.byref(bo), os.fsencode(path))
            return cls.open(path)
        rows = list(rows)
        with tempfile.TemporaryDirectory(prefix="genie-rows-") as d:
            csv_path = os.path.join(d, "rows.csv")
            _write_csv(rows, csv_path)
            try:
                lib.genie_table_build(csv_path.encode(), ctypes.byref(to), ctypes.byref(bo), os.fsencode(path))
            except Error as e:
                raise type(e)(f"the rows, written as CSV (header line 1, rows[i] on line i + 2): {e.message}",
                              e.status, e.reason) from None
        return cls.open(path)

    def _release(self, h):
        if self._t is not None:
            lib.genie_table_free(self._t)
            self._t = None
        super()._release(h)

    def _table(self, h):
        if self._t is None:
            t = ctypes.c_void_p()
            lib.genie_table_open(h, ctypes.byref(t))
            self._t = t
        return self._t

    @property
    def columns(self):
        """[(name, kind)] with kind 'stored', 'numeric' or 'categorical'."""
        with self._use() as h, self._table_lock:
            return self._columns(h)

    def _table_for(self, h, radius, weight):
        """The table handle with @radius and @weight applied; the library's
        defaults (genie_table_open) when both are None.  Holds _table_lock."""
        if self._t is not None and self._tuned:
            lib.genie_table_free(self._t)  # back to the defaults
            self._t = None
        t = self._table(h)
        self._tuned = radius is not None or weight is not None
        for setting, fn, what, lo, hi in ((radius, lib.genie_table_set_radius, "radius", 0, 16777216),
                                          (weight, lib.genie_table_set_weight, "weight", 1, 255)):
            if isinstance(setting, dict):
                for col, v in setting.items():
                    fn(t, str(col).encode(), _convert.count(v, f"{what} of {col}", lo, hi))
            elif setting is not None:
                fn(t, None, _convert.count(setting, what, lo, hi))
        return t

    def _add(self, w, h, rows, labels):
        """add(rows): dicts of the table's columns (a column left out, or None, is missing); a category the
        table was not built with is refused."""
        rows = list(rows)
        with self._table_lock:
            cols = [name for name, _ in self._columns(h)]
        known = set(cols)
        lines = []
        for i, r in enumerate(rows):
            if not isinstance(r, dict):
                raise InvalidArgumentError(f"rows[{i}] must be a dict of column: value, not {type(r).__name__}")
            for c in r:
                if c not in known:
                    raise InvalidArgumentError(f"rows[{i}]: the table has no column {c!r}")
            out = io.StringIO()
            csv.writer(out, lineterminator="").writerow([_cell(r.get(c)) for c in cols])
            lines.append(out.getvalue().encode())
        return _live.add_records(w, lines, labels)

    def _columns(self, h):
        """[(name, kind)] of the open handle @h; holds _table_lock."""
        kinds = ("stored", "numeric", "categorical")
        t = self._table(h)
        kind = ctypes.c_int()
        return [(lib.genie_table_column(t, i, ctypes.byref(kind)).decode(), kinds[kind.value])
                for i in range(lib.genie_table_columns(t))]

    def search(self, rows, k=10, radius=None, weight=None, min_count=0, backend="auto", threads=0, gpu_memory=0,
               stats=None, filter=None):
        """The top-k rows for each query row by match count.

        rows: a list of dicts (any subset of the columns) or a CSV/ARFF file
        path whose header names columns.  radius: bins either side for
        numeric columns (default 50), an int for all or a dict per column;
        weight: 1..255, an int for all or a dict per column.  Returns
        (counts, ids) as Index.search does (filter= too)."""
        mc = _convert.count(min_count, "min_count")
        from_file = isinstance(rows, (str, bytes, os.PathLike))
        if not from_file:
            rows = list(rows)
            for i, r in enumerate(rows):
                if not isinstance(r, dict):
                    raise InvalidArgumentError(f"rows[{i}] must be a dict of column: value, not {type(r).__name__}")
        # The table's radius and weights live in one handle per index:
        # setting them and making the queries hold the lock; the search
        # itself runs without it.

        def fill(q, h):
            with self._table_lock:
                t = self._table_for(h, radius, weight)
                if from_file:
                    rd = ctypes.c_void_p()
                    lib.genie_table_reader_open(ctypes.byref(rd), t, os.fsencode(rows))
                    try:
                        n = ctypes.c_size_t(1)
                        while n.value:
                            lib.genie_table_reader_read(rd, q, _CHUNK, mc, ctypes.byref(n))
                    finally:
                        lib.genie_table_reader_close(rd)
                else:
                    for r in rows:
                        cols = [str(c).encode() for c in r]
                        vals = [_cell(v).encode() for v in r.values()]
                        n = len(cols)
                        lib.genie_table_add_query(t, q, (ctypes.c_char_p * max(n, 1))(*cols),
                                                  (ctypes.c_char_p * max(n, 1))(*vals), n, mc)

        return self._search(fill, k, backend, threads, gpu_memory, stats, filter)
