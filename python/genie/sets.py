"""genie.SetIndex: sets of strings under Jaccard (or cosine, Dice,
overlap, containment) similarity: exactly through the element lists (each
element a keyword, the match count |A n B|; docs/SETS.md), or by MinHash
keywords (Zhou et al., "GENIE: A Generic Inverted Index Framework for
Similarity Search on the GPU", section IV-A), candidates by match count
re-ranked by the exact Jaccard similarity; by default the one estimated
cheaper."""
import ctypes
import os

import numpy as np

from . import _convert, _live
from . import _lib as L
from .errors import InvalidArgumentError
from .index import Index, build_options

lib = L.lib

# genie_set_method (genie/sets.h) by value.
_METHODS = ("minhash", "exact", "scan")

# genie_set_hit (genie/sets.h) as numpy sees it.
_HIT_DTYPE = np.dtype([("object", "<u4"), ("shared", "<u4"), ("union_size", "<u4"), ("count", "<u4"),
                       ("similarity", "<f8")])


def _lines(sets, what, separator):
    """Each set as the line genie reads: a str/bytes line as it is, a
    collection of elements joined by the separator (space by default)."""
    if isinstance(sets, (str, bytes)):
        raise InvalidArgumentError(f"{what} must be a list of sets, not one string")
    sep = b" " if separator is None else separator.encode() if isinstance(separator, str) else bytes(separator)
    out = []
    for i, s in enumerate(sets):
        if isinstance(s, (str, bytes)):
            line = s.encode() if isinstance(s, str) else s
        else:
            els = _convert.strings(list(s), f"{what}[{i}]")
            for e in els:
                if separator is None and (not e or any(c in e for c in b" \t\r\n")):
                    raise InvalidArgumentError(f"{what}[{i}]: element {e!r} is empty or holds white space, "
                                               "which separates elements; give a separator")
                if separator is not None and (sep in e or b"\n" in e):
                    raise InvalidArgumentError(f"{what}[{i}]: element {e!r} holds the separator or a newline")
            line = sep.join(els)
        if b"\n" in line:
            raise InvalidArgumentError(f"{what}[{i}] holds a newline")
        out.append(line)
    return out


def _separator(separator):
    if separator is None:
        return b"\0"
    sep = separator.encode() if isinstance(separator, str) else bytes(separator)
    if len(sep) != 1 or sep == b"\n":
        raise InvalidArgumentError(f"separator must be one byte other than newline, not {separator!r}")
    return sep


class SetIndex(Index):
    """An index of sets of strings (type 'sets')."""

    _type = L.TYPE_SETS

    @classmethod
    def build(cls, sets, path, hashes=64, seed=0, separator=None, **opts):
        """Index @sets at @path and open it.  A set is a line of elements
        (str or bytes) or a collection of elements; elements are separated
        by white space, or by the one-byte @separator.  hashes: MinHash
        functions (1..4096); seed: of the hash functions."""
        p = L.genie_set_params()
        p.hashes = _convert.count(hashes, "hashes", 1, 4096)
        p.seed = _convert.count(seed, "seed")
        p.separator = _separator(separator)
        lines = _lines(sets, "sets", separator)
        if not lines:
            raise InvalidArgumentError("no sets to index")
        bo = build_options(opts)
        b = ctypes.c_void_p()
        lib.genie_set_builder_new(ctypes.byref(b), ctypes.byref(bo), ctypes.byref(p))
        try:
            for s in lines:
                lib.genie_set_builder_add(b, s, len(s))
            lib.genie_set_builder_write(b, os.fsencode(path))
        finally:
            lib.genie_set_builder_free(b)
        return cls.open(path)

    def _add(self, w, h, sets, labels, separator=None):
        """add(sets): lines or collections of elements, as build() takes them (white space separates)."""
        return _live.add_records(w, _lines(sets, "sets", separator), labels)

    def search(self, sets, k=10, candidates=None, exact=False, separator=None, backend="auto", threads=0,
               gpu_memory=0, stats=None, recall=None, measure="jaccard", min_similarity=None,
               filter=None):
        """The k sets most similar to each query set.  Query sets take the
        forms build() takes; a collection is joined with @separator, which
        must be the index's.  Returns (similarity float64, ids int64) of
        shape (nq, k), most similar first, ties by smaller id; where fewer
        than k sets share an element (or reach min_similarity), ids are -1
        and similarity 0.

        How: exact=True answers exactly (through the element lists; an
        index built before them compares every set); candidates=K asks for
        MinHash: the top K (raised to k) by MinHash match count, re-ranked
        by exact Jaccard; neither: the method estimated cheaper.  recall: a
        target in (0, 1] instead of candidates: MinHash with the smallest K
        whose estimated recall@k (k <= 100) reaches it, unless the exact
        search costs less.  measure: "jaccard", "cosine", "dice",
        "overlap" or "containment" (|A n B| / |A|, A the query); all but
        Jaccard are answered exactly.  min_similarity: a threshold in
        (0, 1]: the sets at or above it, exactly, the best k of them; with
        k=None every one of them, returned as lists (one array per query)
        instead of arrays of shape (nq, k).  stats (a dict) gets the
        search's stats, its "method" ("minhash", "exact" or "scan") and
        "reason" (docs/SETS.md).  filter: as Index.search."""
        threshold = _convert.fraction(min_similarity, "min_similarity")
        every = k is None
        if every and not threshold:
            raise InvalidArgumentError("k=None (every answer) needs min_similarity")
        k = 0 if every else _convert.count(k, "k", 1, L.max_k(L.TYPE_SETS))
        lines = _lines(sets, "sets", separator)
        so = L.genie_set_options()
        so.k = k
        so.candidates = 0 if candidates is None else _convert.count(candidates, "candidates", 1)
        so.exact = 1 if exact else 0
        so.recall = _convert.recall(recall)
        so.measure = L.set_measure_code(measure)
        so.min_similarity = threshold
        arr, lens = _convert.c_strings(lines)
        nq = len(lines)
        if every:
            sim, ids = [np.zeros(0, np.float64)] * nq, [np.zeros(0, np.int64)] * nq
        else:
            sim, ids = np.zeros((nq, k), np.float64), np.full((nq, k), -1, np.int64)
        r = ctypes.c_void_p()
        with self._use() as h, self._filter(h, filter) as f:
            opt = L.search_options(k or 1, backend, threads, gpu_memory, f.handle)
            try:
                lib.genie_set_search(h, arr, lens, nq, ctypes.byref(so), ctypes.byref(opt), ctypes.byref(r))
                n = ctypes.c_size_t()
                for i in range(nq):
                    hits = lib.genie_set_results_get(r, i, ctypes.byref(n))
                    if n.value:
                        size = ctypes.sizeof(L.genie_set_hit)
                        a = np.ctypeslib.as_array(ctypes.cast(hits, ctypes.POINTER(ctypes.c_uint8)),
                                                  (n.value * size,)).view(_HIT_DTYPE)
                        if every:
                            ids[i], sim[i] = a["object"].astype(np.int64), a["similarity"].copy()
                        else:
                            ids[i, :n.value] = a["object"]
                            sim[i, :n.value] = a["similarity"]
                if stats is not None:
                    st = L.genie_search_stats()
                    lib.genie_set_results_stats(r, ctypes.byref(st))
                    stats.update(L.stats_dict(st))
                    plan = L.genie_set_plan()
                    lib.genie_set_results_plan(r, ctypes.byref(plan))
                    stats["method"] = _METHODS[plan.method]
                    stats["reason"] = plan.reason.decode()
            finally:
                lib.genie_set_results_free(r)
        return sim, ids
