"""genie.Index: an open index file, searched by keyword queries, and
genie.build_keywords() that writes one.

Threads: an open index is read-only, and the library lets many threads
search it at once; the GIL is released for the length of each search
(ctypes releases it around every library call), so Python threads
searching one Index run in parallel.  close() waits for the searches that
other threads are running on the index, then unmaps it; a search after
close() raises InvalidArgumentError.

Writes (docs/LIVE.md): add(), remove() and compact() go to the index's
write-ahead log through a writer the Index opens at its first write and
holds until close() (the index's lock: other processes' writers, `genie
add` included, are refused meanwhile).  Each returns once the write is
durable, and the Index then searches a snapshot holding it
(genie_index_refresh: the file is not read again).  Writes of several
threads of one Index take turns.
"""
import ctypes
import os
import threading

import numpy as np

from . import _convert, _items, _live
from . import _lib as L
from .errors import InvalidArgumentError

lib = L.lib


class Index:
    """An index file opened for searching (memory-mapped, validated).

    Open with Index.open(path) (or genie.open(path) for the class that fits
    the index type); use as a context manager or call close()."""

    _type = None  # the index type a subclass requires (an L.TYPE_* value)

    def __init__(self, handle, path):
        self._h = handle
        self.path = path
        self._cond = threading.Condition()
        self._active = 0
        self._w = None  # the writer, from the first write to close()
        self._wlock = threading.Lock()
        info = L.genie_index_info()
        lib.genie_index_get_info(handle, ctypes.byref(info))
        self._info = info

    @classmethod
    def open(cls, path):
        """Open @path; raises FileIOError, FormatError, CorruptIndexError."""
        h = ctypes.c_void_p()
        lib.genie_index_open(os.fsencode(path), ctypes.byref(h))
        idx = cls(h, os.fspath(path))
        if cls._type is not None and idx._info.type != cls._type:
            idx.close()
            raise InvalidArgumentError(f"{path} is a {L.INDEX_TYPES[idx._info.type]} index, not a "
                                       f"{L.INDEX_TYPES[cls._type]} index")
        return idx

    # -- lifetime

    def close(self):
        """Close the index, once the searches running on it have ended (and
        its writer, which releases the index's lock)."""
        with self._cond:
            if self._h is None:
                return
            while self._active:
                self._cond.wait()
            h, self._h = self._h, None
        self._release(h)
        with self._wlock:
            w, self._w = self._w, None
        if w is not None:
            lib.genie_writer_close(w)

    def _release(self, h):
        """Free what the index holds; no search can be using it any more."""
        lib.genie_index_close(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # Only reached when no thread holds the index, so nothing is running.
        if getattr(self, "_h", None) is not None:
            h, self._h = self._h, None
            self._release(h)
        if getattr(self, "_w", None) is not None:
            w, self._w = self._w, None
            lib.genie_writer_close(w)

    @property
    def closed(self):
        return self._h is None

    class _Use:
        """Holds the index open while a call uses its handle."""

        def __init__(self, idx):
            self.idx = idx

        def __enter__(self):
            idx = self.idx
            with idx._cond:
                if idx._h is None:
                    raise InvalidArgumentError(f"{idx.path}: the index is closed")
                idx._active += 1
                return idx._h

        def __exit__(self, *exc):
            idx = self.idx
            with idx._cond:
                idx._active -= 1
                if idx._active == 0:
                    idx._cond.notify_all()

    def _use(self):
        return Index._Use(self)

    # -- what it holds

    @property
    def info(self):
        """A dict: type (name), the counts of genie_index_info, parts."""
        with self._use() as h:
            d = L.struct_dict(self._info)
            d["type"] = L.INDEX_TYPES[self._info.type]
            d["has_labels"] = bool(d["has_labels"])
            d["has_records"] = bool(d["has_records"])
            d["parts"] = []
            for p in range(lib.genie_index_parts(h)):
                pi = L.genie_part_info()
                lib.genie_index_part_info(h, p, ctypes.byref(pi))
                d["parts"].append(L.struct_dict(pi))
        return d

    def __len__(self):
        return self._info.n_objects

    # -- recall estimates (sets, sequences, vectors)

    def prepare_recall(self, threads=0):
        """Compute the recall estimate now (or load it from PATH.recall) and
        keep it in PATH.recall; searches with recall= use it."""
        threads = _convert.count(threads, "threads")
        with self._use() as h:
            lib.genie_recall_prepare(h, threads)

    def recall_estimate(self, k, candidates, radius=0):
        """The recall@k the stored estimate predicts with `candidates` (K)
        and (l2 vectors) `radius`, or for a sequence index at edit level
        `radius` (0..4: queries with 10%..50% edits); None when no estimate
        is stored."""
        k = _convert.count(k, "k", 1, 100)
        candidates = _convert.count(candidates, "candidates", 1)
        radius = _convert.count(radius, "radius", 0, 4)
        r = ctypes.c_double()
        with self._use() as h:
            lib.genie_recall_predict(h, k, candidates, radius, ctypes.byref(r), None)
        return None if r.value < 0 else r.value

    def __repr__(self):
        state = "closed" if self._h is None else f"{self._info.n_objects} objects"
        return f"<genie.{type(self).__name__} {self.path!r}: {L.INDEX_TYPES[self._info.type]}, {state}>"

    def label(self, object_id):
        """The 64-bit label of an object (InvalidArgumentError when none)."""
        i = _convert.count(object_id, "object id", 0, max(len(self) - 1, 0))
        v = ctypes.c_uint64()
        with self._use() as h:
            lib.genie_index_label(h, i, ctypes.byref(v))
        return v.value

    def labels(self, ids):
        """Labels of an array of object ids; -1 ids give -1 (an int64 view of the uint64 labels otherwise)."""
        ids = np.asarray(ids)
        out = np.full(ids.shape, -1, np.int64)
        flat = out.reshape(-1)
        for j, i in enumerate(ids.reshape(-1)):
            if i >= 0:
                flat[j] = np.uint64(self.label(int(i))).astype(np.int64)
        return out

    def record_bytes(self, object_id):
        """The record stored with an object, as bytes."""
        i = _convert.count(object_id, "object id", 0, max(len(self) - 1, 0))
        p, n = ctypes.c_void_p(), ctypes.c_size_t()
        with self._use() as h:
            lib.genie_index_record(h, i, ctypes.byref(p), ctypes.byref(n))
            return ctypes.string_at(p.value, n.value) if n.value else b""

    def record(self, object_id):
        """The record stored with an object, decoded as UTF-8 (bad bytes replaced)."""
        return self.record_bytes(object_id).decode("utf-8", "replace")

    # -- writes (docs/LIVE.md)

    def add(self, objects, labels=None):
        """Add @objects to the index (durable on return; later searches of
        this Index see them).  A keywords index takes what build_keywords()
        takes: lists of keywords, a 2-D array, a CSR pair; the other types
        their own (see their add()).  labels: None (the next free labels) or
        one 64-bit label per object, none of them in use.  Returns the
        objects' labels (uint64).  A docs index takes no writes
        (NotSupportedError)."""
        return self._write(lambda w, h: self._add(w, h, objects, labels))

    def remove(self, labels):
        """Delete every object carrying one of @labels (labels no object
        carries are skipped); returns how many objects were deleted."""
        a = _convert.uint_array(labels, "labels", dtype=np.uint64)
        n = ctypes.c_size_t()
        self._write(lambda w, h: lib.genie_writer_delete(w, a, len(a), ctypes.byref(n)))
        return n.value

    def compact(self):
        """Write the index with its log applied to a new file renamed into
        place, and start an empty log: deleted objects go, the others are
        numbered from 0 in order, labels stay.  The Index then searches the
        new file."""
        self._write(lambda w, h: lib.genie_writer_compact(w), reopen=True)

    @property
    def live(self):
        """What the index's log holds, as this Index reads it: a dict of
        genie_live_info (live, base_objects, added, deleted, log_bytes, torn_bytes)."""
        li = L.genie_live_info()
        with self._use() as h:
            lib.genie_index_live_info(h, ctypes.byref(li))
        return L.struct_dict(li)

    def _add(self, w, h, objects, labels):
        keywords, offsets = _csr_objects(objects)
        records = None
        if self._info.has_records:  # the line a build would have stored
            records = [" ".join(str(int(k)) for k in keywords[int(offsets[i]):int(offsets[i + 1])]).encode()
                       for i in range(len(offsets) - 1)]
        return _live.add_keywords(w, keywords, offsets, labels, records)

    def _write(self, fn, reopen=False):
        """Run fn(writer, handle) with the writer (opened at the first
        write), then make this Index search a snapshot holding the write:
        the log read again (or, @reopen, the new file after a compaction)."""
        with self._wlock:
            if self._w is None:
                w = ctypes.c_void_p()
                lib.genie_writer_open(os.fsencode(self.path), ctypes.byref(w))
                self._w = w
            with self._use() as h:
                out = fn(self._w, h)
                new = ctypes.c_void_p()
                if reopen:
                    lib.genie_index_open(os.fsencode(self.path), ctypes.byref(new))
                else:
                    lib.genie_index_refresh(h, ctypes.byref(new))
            self._swap(new)
        return out

    def _swap(self, new):
        """Search the snapshot @new from now on, once the searches running on the old one end."""
        with self._cond:
            while self._active:
                self._cond.wait()
            old, self._h = self._h, new
            lib.genie_index_get_info(new, ctypes.byref(self._info))
        self._release(old)

    # -- search

    def _filter(self, h, spec):
        """The search's filter (genie._live.Filter) of @spec for handle @h."""
        return _live.Filter(h, spec, self._info.n_objects)

    def search(self, queries, k=10, min_count=0, backend="auto", threads=0, gpu_memory=0, stats=None, filter=None):
        """The top-k objects of each query by match count.

        queries: see genie._items (lists of keywords or (lo, hi[, weight])
        ranges, a 2-D keyword array, a CSR pair, structured arrays).
        Returns (counts, ids): int32 and int64 arrays of shape (nq, k), best
        first (count descending, ties by smaller id), -1 where fewer than k
        objects matched.  backend: a name of genie.backends() ("auto":
        cuda when a GPU is usable, else cpu); threads: CPU threads (0 = all cores); gpu_memory: the
        GPU memory the search may use (bytes, 0 = most of the free).  stats:
        a dict to fill with where the time went and the backend that ran
        (genie_search_stats).  filter: the objects that may be answered
        (object ids, a boolean mask, or {"ids": [...], "labels": [...]};
        genie._live), exactly as if the index held them alone."""
        items, offsets = _items.to_items(queries)
        mc = _convert.count(min_count, "min_count")

        def fill(q, h):
            lib.genie_queries_add_many(q, items, offsets, len(offsets) - 1, mc)

        return self._search(fill, k, backend, threads, gpu_memory, stats, filter)

    def _search(self, fill, k, backend, threads, gpu_memory, stats=None, filter=None):
        """Run genie_search on the queries that @fill(q, handle) appends to
        the genie_queries q; returns (counts, ids) with one row per query."""
        k = _convert.count(k, "k", 1)
        q, r = ctypes.c_void_p(), ctypes.c_void_p()
        st = L.genie_search_stats()
        with self._use() as h, self._filter(h, filter) as f:
            opt = L.search_options(k, backend, threads, gpu_memory, f.handle)
            lib.genie_queries_new(ctypes.byref(q))
            try:
                fill(q, h)
                nq = lib.genie_queries_count(q)
                counts = np.empty((nq, k), np.int32)
                ids = np.empty((nq, k), np.int64)
                lib.genie_search_with_stats(h, q, ctypes.byref(opt), ctypes.byref(r), ctypes.byref(st))
                lib.genie_results_copy(r, k, ids, counts)
            finally:
                lib.genie_results_free(r)
                lib.genie_queries_free(q)
        if stats is not None:
            stats.update(L.stats_dict(st))
        return counts, ids


def build_options(opts):
    """genie_build_options from keyword arguments (see BUILD_OPTION_NAMES)."""
    unknown = sorted(set(opts) - set(L.BUILD_OPTION_NAMES))
    if unknown:
        raise InvalidArgumentError(f"unknown build option {unknown[0]!r}; known: {', '.join(L.BUILD_OPTION_NAMES)}")
    return L.build_options(**opts)


def _csr_objects(objects):
    """(keywords uint32, offsets uint64) from a CSR pair or a list of keyword sequences."""
    if isinstance(objects, tuple) and len(objects) == 2 and all(isinstance(x, np.ndarray) for x in objects):
        indptr = _convert.uint_array(objects[0], "indptr", dtype=np.uint64)
        keywords = _convert.uint_array(objects[1], "indices")
        if len(indptr) == 0:
            raise InvalidArgumentError("indptr must have n + 1 entries, got none")
        if (np.diff(indptr.astype(np.int64)) < 0).any():
            raise InvalidArgumentError("indptr must not decrease")
        if int(indptr[-1]) > len(keywords):
            raise InvalidArgumentError(f"indptr ends at {int(indptr[-1])}, past the {len(keywords)} indices")
        return keywords, indptr
    if isinstance(objects, np.ndarray) and objects.ndim == 2:
        kw = _convert.uint_array(objects.reshape(-1), "objects")
        return kw, np.arange(objects.shape[0] + 1, dtype=np.uint64) * np.uint64(objects.shape[1])
    if isinstance(objects, (str, bytes)):
        raise InvalidArgumentError("objects must be a list of keyword lists or a CSR pair, not a string")
    try:
        objs = list(objects)
    except TypeError:
        raise InvalidArgumentError(f"objects must be a list of keyword lists, not {type(objects).__name__}") from None
    parts = []
    for i, o in enumerate(objs):
        if isinstance(o, (str, bytes)) or not hasattr(o, "__len__"):
            raise InvalidArgumentError(f"objects[{i}] must be a sequence of keywords, not {o!r}")
        parts.append(_convert.uint_array(np.asarray(o) if len(o) else np.zeros(0, np.uint32), f"objects[{i}]"))
    offsets = np.zeros(len(parts) + 1, np.uint64)
    if parts:
        np.cumsum([len(p) for p in parts], out=offsets[1:])
    kw = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    return np.ascontiguousarray(kw, np.uint32), offsets


def build_keywords(objects, path, labels=None, **opts):
    """Write a keyword index of @objects to @path and open it.

    objects: a list of keyword sequences (ints 0..2^32-1), a 2-D integer
    array (one object per row) or a CSR pair (indptr, indices) of numpy
    arrays (object i is indices[indptr[i]:indptr[i + 1]]; uint32 indices are
    passed without a copy).  labels: None or one 64-bit label per object.
    opts: sublist_length, part_objects, part_bytes, gpu_memory (the build
    options of `genie build`).  Returns the open Index."""
    keywords, offsets = _csr_objects(objects)
    n = len(offsets) - 1
    if n == 0:
        raise InvalidArgumentError("no objects to index")
    lab = None
    if labels is not None:
        lab = _convert.uint_array(labels, "labels", dtype=np.uint64)
        if len(lab) != n:
            raise InvalidArgumentError(f"{len(lab)} labels for {n} objects")
    bo = build_options(opts)
    b = ctypes.c_void_p()
    lib.genie_builder_new(ctypes.byref(b), ctypes.byref(bo))
    try:
        lib.genie_builder_add_many(b, keywords, offsets, n, lab)
        lib.genie_builder_write(b, os.fsencode(path))
    finally:
        lib.genie_builder_free(b)
    return Index.open(path)
