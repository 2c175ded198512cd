"""genie.DocsIndex: ranked retrieval of documents by AND (or OR) queries,
scored by alpha * PageRank + (1 - alpha) * BM25 with early termination
(Wang et al., "Efficient GPU-based Query Processing with Pruned List
Caching in Search Engines", sections 2.1 and 3; docs/DOCS.md).  The
answers are those of `genie search` on the same index, and of exhaustive
evaluation."""
import ctypes
import os

import numpy as np

from . import _convert, _live
from . import _lib as L
from .errors import InvalidArgumentError, NotSupportedError
from .index import Index, build_options

lib = L.lib

HIT_DTYPE = L.DOCS_HIT_DTYPE
_POLICIES = {"vfb": 0, "qtf": 1, "qtfdf": 2}
_MODES = {"and": 0, "or": 1}


def _params(alpha, k1, b, damping):
    p = L.genie_docs_params()
    lib.genie_docs_params_default(ctypes.byref(p))
    for name, v in (("alpha", alpha), ("k1", k1), ("b", b), ("damping", damping)):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
                raise InvalidArgumentError(f"{name} must be a number, not {v!r}")
            setattr(p, name, float(v))
    return p


def _links(links):
    """(from, to) record-number pairs as an (n, 2) int64 array."""
    try:
        a = np.asarray(links, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError("links must be (from, to) pairs of record numbers") from None
    if a.size == 0:
        return np.zeros((0, 2), np.int64)
    if a.ndim != 2 or a.shape[1] != 2:
        raise InvalidArgumentError(f"links must be (from, to) pairs of record numbers, not shape {a.shape}")
    if (a < 0).any():
        raise InvalidArgumentError(f"links: record number {int(a.min())} is negative")
    return a


class DocsIndex(Index):
    """An index of documents for ranked AND/OR queries (type 'docs')."""

    _type = L.TYPE_DOCS

    def __init__(self, handle, path):
        super().__init__(handle, path)
        self._d = None
        if self._info.type == L.TYPE_DOCS:
            d = ctypes.c_void_p()
            lib.genie_docs_open(handle, ctypes.byref(d))
            self._d = d

    def _add(self, w, h, objects, labels):
        raise NotSupportedError(f"{self.path}: a docs index takes no writes (its file is ordered by the build's "
                                "scores): rebuild it")

    def _write(self, fn, reopen=False):
        # Refused before a writer is opened (the library refuses a docs index's writer too).
        return self._add(None, None, None, None)

    def _records_to_docs(self, records):
        """The docIDs of record numbers (a filter's ids, as searches print them); past the last: n_docs."""
        info = L.genie_docs_info()
        lib.genie_docs_get_info(self._d, ctypes.byref(info))
        n = info.n_docs
        doc_of = np.full(n + 1, n, np.uint64)
        rec = ctypes.c_uint32()
        for doc in range(n):
            lib.genie_docs_document(self._d, doc, ctypes.byref(rec), None, None, None)
            doc_of[rec.value] = doc
        return doc_of[np.minimum(records, n)]

    def _release(self, h):
        d, self._d = getattr(self, "_d", None), None
        if d is not None:
            lib.genie_docs_close(d)
        super()._release(h)

    @classmethod
    def build(cls, documents, path, links=None, static_scores=None, stop_words=None, store_records=True,
              alpha=None, k1=None, b=None, damping=None, **opts):
        """Index @documents (str or bytes each: record numbers 0, 1, ... in
        order; words as the text type splits them) at @path and open it.
        links: (from, to) record-number pairs for PageRank; static_scores:
        one number >= 0 per document instead (not with links); neither:
        uniform.  stop_words: words never indexed; store_records: keep each
        document (record(doc) gives it by docID, the "doc" of a hit).  alpha (0.3), k1 (1.2), b (0.75),
        damping (0.85): the parameters of `genie build -t docs`.  opts: the
        build options (a docs index is one part: part options are refused)."""
        docs = _convert.strings(documents, "documents")
        if not docs:
            raise InvalidArgumentError("no documents to index")
        if links is not None and static_scores is not None:
            raise InvalidArgumentError("links and static_scores exclude each other")
        stops = _convert.strings(stop_words or [], "stop_words")
        stop_arr = (ctypes.c_char_p * max(len(stops), 1))(*stops)
        p = _params(alpha, k1, b, damping)
        bo = build_options(opts)
        h = ctypes.c_void_p()
        lib.genie_docs_builder_new(ctypes.byref(h), ctypes.byref(bo), ctypes.byref(p), stop_arr, len(stops),
                                   1 if store_records else 0)
        try:
            for d in docs:
                lib.genie_docs_builder_add(h, d, len(d))
            if links is not None:
                for u, v in _links(links).tolist():
                    lib.genie_docs_builder_add_link(h, u, v)
            if static_scores is not None:
                s = np.ascontiguousarray(np.asarray(static_scores, dtype=np.float64).reshape(-1))
                lib.genie_docs_builder_set_scores(h, s, len(s))
            lib.genie_docs_builder_write(h, os.fsencode(path))
        finally:
            lib.genie_docs_builder_free(h)
        return cls.open(path)

    # -- what it holds

    @property
    def docs_info(self):
        """A dict: n_docs, n_postings, n_words, alpha, k1, b, avg_length,
        score_source ('uniform', 'pagerank' or 'static'), n_links, iterations."""
        info = L.genie_docs_info()
        with self._use():
            lib.genie_docs_get_info(self._d, ctypes.byref(info))
        d = L.struct_dict(info)
        d["score_source"] = ("uniform", "pagerank", "static")[info.score_source]
        return d

    def document(self, doc):
        """Document @doc (a docID, 0 = highest global score) as a dict:
        record, length, pagerank, global_score."""
        i = _convert.count(doc, "doc", 0, max(len(self) - 1, 0))
        rec, length, pr, gs = ctypes.c_uint32(), ctypes.c_uint32(), ctypes.c_double(), ctypes.c_double()
        with self._use():
            lib.genie_docs_document(self._d, i, ctypes.byref(rec), ctypes.byref(length), ctypes.byref(pr),
                                    ctypes.byref(gs))
        return {"record": rec.value, "length": length.value, "pagerank": pr.value, "global_score": gs.value}

    # -- cache plans (GPU)

    def make_cache_plan(self, train, path, policy="vfb", lam=1.0, k=10):
        """Write the GPU list-cache plan of the training queries @train to
        @path (`genie cache-plan`): policy 'vfb' (blocks by visiting
        frequency, lam = lambda in (0, 1]), 'qtf' or 'qtfdf'."""
        if policy not in _POLICIES:
            raise InvalidArgumentError(f"policy must be one of {', '.join(_POLICIES)}, not {policy!r}")
        qs = _convert.strings(train, "train")
        arr, lens = _convert.c_strings(qs)
        plan = ctypes.c_void_p()
        with self._use():
            lib.genie_docs_plan_build(self._d, arr, lens, len(qs), _convert.count(k, "k", 1, L.max_k(L.TYPE_DOCS)),
                                      _POLICIES[policy], float(lam), ctypes.byref(plan))
            try:
                lib.genie_docs_plan_write(plan, os.fsencode(path))
            finally:
                lib.genie_docs_plan_free(plan)

    # -- search

    def _run(self, queries, k, mode, exhaustive, backend, threads, gpu_memory, cache_fraction, cache_plan, stats,
             take, filter=None):
        """Search, then take(results handle, n queries) while the results live."""
        if mode not in _MODES:
            raise InvalidArgumentError(f"mode must be 'and' or 'or', not {mode!r}")
        qs = _convert.strings(queries, "queries")
        o = L.genie_docs_options()
        o.k = _convert.count(k, "k", 1, L.max_k(L.TYPE_DOCS))
        o.mode = _MODES[mode]
        o.exhaustive = 1 if exhaustive else 0
        o.threads = _convert.count(threads, "threads")
        o.backend = L.backend_code(backend)
        o.gpu_memory = L._u(gpu_memory, 64, "gpu_memory")
        if isinstance(cache_fraction, bool) or not isinstance(cache_fraction, (int, float)) or \
                not (cache_fraction == 0 or 0 < cache_fraction < 1):
            raise InvalidArgumentError(f"cache_fraction must be in (0, 1) (or 0 for 0.5), not {cache_fraction!r}")
        o.cache_fraction = float(cache_fraction)
        arr, lens = _convert.c_strings(qs)
        plan, r = ctypes.c_void_p(), ctypes.c_void_p()
        with self._use() as h, _live.Filter(h, filter, self._info.n_objects, self._records_to_docs) as f:
            o.filter = f.handle
            try:
                if cache_plan is not None:
                    lib.genie_docs_plan_read(self._d, os.fsencode(cache_plan), ctypes.byref(plan))
                    o.plan = plan.value
                lib.genie_docs_search(self._d, arr, lens, len(qs), ctypes.byref(o), ctypes.byref(r))
                out = take(r, len(qs))
                if stats is not None:
                    st = L.genie_docs_stats()
                    lib.genie_docs_results_stats(r, ctypes.byref(st))
                    d = L.struct_dict(st)
                    d["backend"] = lib.genie_backend_name(st.backend).decode()
                    stats.update(d)
            finally:
                lib.genie_docs_results_free(r)
                lib.genie_docs_plan_free(plan)
        return out

    @staticmethod
    def _hits(r, q):
        n = ctypes.c_size_t()
        p = lib.genie_docs_results_get(r, q, ctypes.byref(n))
        if not n.value:
            return np.zeros(0, HIT_DTYPE)
        buf = (ctypes.c_char * (n.value * HIT_DTYPE.itemsize)).from_address(p)
        return np.frombuffer(bytes(buf), HIT_DTYPE)

    def search(self, queries, k=10, mode="and", exhaustive=False, backend="auto", threads=0, gpu_memory=0,
               cache_fraction=0.0, cache_plan=None, stats=None, filter=None):
        """The top-k documents of each query (a string of words): mode
        'and' (documents holding every word; a word no document holds gives
        no answer) or 'or' (any word).  Returns (scores float64, records
        int64) of shape (nq, k), best first, ties by smaller record number;
        where fewer than k documents match, records are -1 and scores 0.
        exhaustive: no early termination (the oracle; same answers).
        backend 'cuda' (and 'auto' when a GPU is usable): AND queries with
        k <= 1024 on the GPU, with
        gpu_memory (bytes, 0 = 1 GiB) split by cache_fraction (0 = 0.5) into
        the list cache and the batch buffer, and the cache plan file
        cache_plan (make_cache_plan); the answers are the same.  threads:
        CPU threads (0 = all cores).  stats: a dict to fill with the
        postings read and the GPU's counts (genie_docs_stats).  filter: the
        documents that may be answered, as Index.search takes it, ids being
        record numbers; scores keep the whole collection's statistics."""

        kk = _convert.count(k, "k", 1, L.max_k(L.TYPE_DOCS))

        def take(r, nq):
            scores = np.zeros((nq, kk), np.float64)
            records = np.full((nq, kk), -1, np.int64)
            for q in range(nq):
                h = self._hits(r, q)
                scores[q, :len(h)] = h["score"]
                records[q, :len(h)] = h["record"]
            return scores, records

        return self._run(queries, k, mode, exhaustive, backend, threads, gpu_memory, cache_fraction, cache_plan,
                         stats, take, filter)

    def search_hits(self, queries, k=10, mode="and", exhaustive=False, backend="auto", threads=0, gpu_memory=0,
                    cache_fraction=0.0, cache_plan=None, stats=None, filter=None):
        """As search(), but per query a structured array of its hits (best
        first), dtype genie.DocsIndex.HIT_DTYPE: doc (docID), record, score,
        bm25 and pagerank (both normalised), as `genie search --json` gives."""
        return self._run(queries, k, mode, exhaustive, backend, threads, gpu_memory, cache_fraction, cache_plan,
                         stats, lambda r, nq: [self._hits(r, q) for q in range(nq)], filter)

    HIT_DTYPE = HIT_DTYPE
