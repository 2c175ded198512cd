"""Filters and writes of an index (docs/LIVE.md), shared by every index
class: a search's filter= made into a genie_filter, and the writer an Index
opens at its first add(), remove() or compact().

A filter is one of
    a sequence (or 1-D integer array) of object ids, as searches return them
        (docs: record numbers);
    a boolean array of len(index) (True: allowed);
    a dict {"ids": [...], "labels": [...]}, either or both (they AND).
The answers are those of an index of the allowed objects alone, with the
index's ids (the library reads the bitmap inside every search path).
"""
import ctypes

import numpy as np

from . import _convert
from . import _lib as L
from .errors import InvalidArgumentError

lib = L.lib


def _ids_array(v, what):
    a = np.asarray(v)
    if a.size == 0:
        return np.zeros(0, np.uint64)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise InvalidArgumentError(f"{what} must be a 1-D sequence of whole numbers")
    if a.dtype.kind == "i" and (a < 0).any():
        raise InvalidArgumentError(f"{what} must not hold negative numbers")
    return np.ascontiguousarray(a, np.uint64)


class Filter:
    """A genie_filter for one search of the index handle @h (None when @spec is None).

    @to_objects: maps the ids a search prints to object ids (docs: record
    numbers to docIDs), or None when they are the same."""

    def __init__(self, h, spec, n_objects, to_objects=None):
        self.handle = None
        if spec is None:
            return
        f = ctypes.c_void_p()
        lib.genie_filter_new(ctypes.byref(f), n_objects)
        self.handle = f
        try:
            self._fill(h, spec, n_objects, to_objects)
        except BaseException:
            self.close()
            raise

    def _fill(self, h, spec, n, to_objects):
        f = self.handle
        if isinstance(spec, np.ndarray) and spec.dtype == np.bool_:
            if spec.shape != (n,):
                raise InvalidArgumentError(f"a boolean filter must have one entry per object ({n}), not {spec.shape}")
            for o in np.flatnonzero(spec):
                lib.genie_filter_set(f, int(o), 1)
            return
        if not isinstance(spec, dict):
            spec = {"ids": spec}
        unknown = sorted(set(spec) - {"ids", "labels"})
        if unknown or not spec:
            raise InvalidArgumentError("filter: a dict takes 'ids' and 'labels'" +
                                       (f", not {unknown[0]!r}" if unknown else ""))
        lib.genie_filter_set_all(f, 1)
        for key, v in spec.items():
            a = _ids_array(v, f"filter {key}")
            g = ctypes.c_void_p()
            lib.genie_filter_new(ctypes.byref(g), n)
            try:
                if key == "labels":
                    lib.genie_filter_allow_labels(g, h, a, len(a), None)
                else:
                    objs = to_objects(a) if to_objects is not None else a
                    bad = np.flatnonzero(objs >= n)
                    if len(bad):
                        raise InvalidArgumentError(f"filter ids: {int(a[bad[0]])} is not an id of the index "
                                                   f"(0 .. {n - 1})")
                    for o in objs:
                        lib.genie_filter_set(g, int(o), 1)
                lib.genie_filter_intersect(f, g)
            finally:
                lib.genie_filter_free(g)

    def close(self):
        if self.handle is not None:
            lib.genie_filter_free(self.handle)
            self.handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def labels_array(labels, n, what="labels"):
    """None, or @n 64-bit labels as a uint64 array."""
    if labels is None:
        return None
    a = _convert.uint_array(labels, what, dtype=np.uint64)
    if len(a) != n:
        raise InvalidArgumentError(f"{len(a)} {what} for {n} objects: one each, or none (the next free ones)")
    return a


def add_records(w, records, labels):
    """genie_writer_add_records of @records (bytes each); returns the labels (uint64)."""
    n = len(records)
    arr, lens = _convert.c_strings(records)
    out = np.zeros(n, np.uint64)
    lib.genie_writer_add_records(w, arr, lens, n, labels_array(labels, n), out)
    return out


def add_keywords(w, keywords, offsets, labels, records=None):
    """genie_writer_add of keyword objects (CSR: keywords uint32, offsets uint64); records: bytes each or None."""
    n = len(offsets) - 1
    lab = labels_array(labels, n)
    objs = (L.genie_object * max(n, 1))()
    base = keywords.ctypes.data
    keep = []
    for i in range(n):
        o = objs[i]
        o.keywords = base + 4 * int(offsets[i])
        o.n_keywords = int(offsets[i + 1] - offsets[i])
        if lab is not None:
            o.has_label, o.label = 1, int(lab[i])
        if records is not None:
            buf = ctypes.create_string_buffer(records[i], len(records[i]))
            keep.append(buf)
            o.record, o.record_len = ctypes.addressof(buf), len(records[i])
    out = np.zeros(n, np.uint64)
    lib.genie_writer_add(w, ctypes.addressof(objs), n, out)
    return out
