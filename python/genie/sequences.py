"""genie.SequenceIndex: strings under edit distance: ordered n-grams as
keywords, candidates by match count verified by the exact edit distance,
and a certificate when the answer is provably the exact top-k (Zhou et al.,
"GENIE: A Generic Inverted Index Framework for Similarity Search on the
GPU", section V-A, Algorithm 2 and Theorem V.2).  Strings are bytes: a str
is UTF-8 encoded, and a multi-byte character counts as several symbols."""
import ctypes
import os
from typing import List, NamedTuple

from . import _convert, _live
from . import _lib as L
from .errors import InvalidArgumentError
from .index import Index, build_options

lib = L.lib


class SequenceHit(NamedTuple):
    id: int        # object id
    distance: int  # exact edit distance (unit costs)
    count: int     # match count of the candidate (0 when found by comparing every string)


class SequenceResult(NamedTuple):
    hits: List[SequenceHit]  # best first: distance, then smaller id
    certified: bool          # the hits are provably the exact top-k
    candidates: int          # K of the query's last round (0 in exact mode)


class SequenceIndex(Index):
    """An index of strings (type 'sequences')."""

    _type = L.TYPE_SEQUENCES

    @classmethod
    def build(cls, strings, path, gram=3, **opts):
        """Index @strings (str or bytes each) by their ordered @gram-grams
        (1..64) at @path and open it; each string is stored in the index."""
        bs = _convert.strings(strings, "strings")
        if not bs:
            raise InvalidArgumentError("no strings to index")
        bo = build_options(opts)
        b = ctypes.c_void_p()
        lib.genie_seq_builder_new(ctypes.byref(b), ctypes.byref(bo), _convert.count(gram, "gram", 1, 64))
        try:
            for s in bs:
                lib.genie_seq_builder_add(b, s, len(s))
            lib.genie_seq_builder_write(b, os.fsencode(path))
        finally:
            lib.genie_seq_builder_free(b)
        return cls.open(path)

    @property
    def gram(self):
        g = ctypes.c_uint32()
        with self._use() as h:
            lib.genie_seq_gram_length(h, ctypes.byref(g))
        return g.value

    def _add(self, w, h, strings, labels):
        """add(strings): one str or bytes each, as build() takes them."""
        return _live.add_records(w, _convert.strings(strings, "strings"), labels)

    def search(self, strings, k=1, candidates=None, certify=True, exact=False, backend="auto", threads=0,
               gpu_memory=0, stats=None, recall=None, filter=None):
        """The k strings nearest to each query string by edit distance.

        candidates: K, the candidates by match count (default 32, raised to
        k).  certify: True searches the queries not yet certified again with
        K doubled up to 4096 (an int gives that limit), then compares the
        ones still uncertified with every string, so every answer is the
        exact top-k (stats["fallback"] counts them); "only" doubles up to
        4096 without that fallback (certificate or nothing); False does one
        round.  exact: compare with every string.  Returns one
        SequenceResult per query: hits (id, distance, count), certified,
        candidates.  recall: a target in (0, 1] for the search without
        certificates (certify=True is then ignored; a certify limit is an
        error): K becomes the smallest whose estimated recall@k (k <= 100)
        reaches it (docs/SEQUENCES.md).  filter: as Index.search."""
        k = _convert.count(k, "k", 1, L.max_k(L.TYPE_SEQUENCES))
        qs = _convert.strings(strings, "strings")
        so = L.genie_seq_options()
        so.k = k
        so.candidates = 0 if candidates is None else _convert.count(candidates, "candidates", 1)
        so.recall = _convert.recall(recall)
        if certify is True and recall is not None:
            so.max_candidates = 0
        elif certify is True or certify == "only":
            so.max_candidates = 4096
            so.certify_only = 1 if certify == "only" else 0
        elif certify is False or certify is None:
            so.max_candidates = 0
        else:
            so.max_candidates = _convert.count(certify, "certify limit", 1)
        so.exact = 1 if exact else 0
        kk = max(so.candidates or 32, k)
        if so.max_candidates and so.max_candidates < kk:
            if certify is not True and certify != "only":
                raise InvalidArgumentError(f"certify limit {certify} is below K = {kk}")
            so.max_candidates = kk
        arr, lens = _convert.c_strings(qs)
        out = []
        r = ctypes.c_void_p()
        with self._use() as h, self._filter(h, filter) as f:
            opt = L.search_options(k, backend, threads, gpu_memory, f.handle)
            try:
                lib.genie_seq_search(h, arr, lens, len(qs), ctypes.byref(so), ctypes.byref(opt), ctypes.byref(r))
                n, cert, used = ctypes.c_size_t(), ctypes.c_int(), ctypes.c_uint32()
                for i in range(len(qs)):
                    p = lib.genie_seq_results_get(r, i, ctypes.byref(n), ctypes.byref(cert), ctypes.byref(used))
                    hits = [SequenceHit(p[j].object, p[j].distance, p[j].count) for j in range(n.value)]
                    out.append(SequenceResult(hits, bool(cert.value), used.value))
                if stats is not None:
                    st = L.genie_search_stats()
                    lib.genie_seq_results_stats(r, ctypes.byref(st))
                    stats.update(L.stats_dict(st))
            finally:
                lib.genie_seq_results_free(r)
        return out

    def string(self, object_id):
        """The stored string of an object (str, bad UTF-8 replaced)."""
        return self.record(object_id)
