"""genie.VectorIndex: dense vectors under l2, l1, cosine or (inverted
files) the inner product, searched like Faiss (search(xq, k) ->
(distances, ids)), by LSH + re-ranking, by an inverted file (IVF-Flat,
IVF-PQ) or exactly; genie.eval_recall() scores an answer against the
exact one.

Arrays: float32 C-contiguous (n, d) arrays are passed to the library by
pointer; other real dtypes or layouts are converted (one copy).  Vectors
must be finite.
"""
import ctypes
import os

import numpy as np

from . import _convert, _live
from . import _lib as L
from .errors import InvalidArgumentError
from .index import Index, build_options

lib = L.lib


def _vectors(a):
    """A genie_vectors viewing the float32 C-contiguous array @a (keep @a alive)."""
    v = L.genie_vectors()
    v.n, v.dim = a.shape
    v.data = a.ctypes.data
    return v


def _default_recall(recall):
    """A build's default recall target for the params struct: 0 for None (the library's 0.9)."""
    if recall is None:
        return 0.0
    if isinstance(recall, bool) or not isinstance(recall, (int, float, np.floating, np.integer)) \
            or not 0 < recall <= 1:
        raise InvalidArgumentError(f"recall must be a number in (0, 1], not {recall!r}")
    return float(recall)


class VectorIndex(Index):
    """An index of dense vectors (type 'vectors')."""

    _type = L.TYPE_VECTORS

    @classmethod
    def build(cls, xb, path, metric="l2", m=0, buckets=0, bits=0, width=0.0, sigma=0.0, seed=1, ivf=None, pq=None,
              refine=False, train_size=0, iterations=0, backend="auto", threads=0, recall=None, precision="fp32",
              **opts):
        """Hash the rows of @xb (n, d) into an LSH index at @path and open it;
        or, with ivf, build an inverted file (genie build --ivf).

        metric: l2 (E2LSH), l1 (random binning), cosine (sign projections);
        with ivf: l2, ip (inner product) or cosine.
        LSH: m: hash functions (0 = 237); buckets: l2/l1 buckets per function
        (0 = 67 for l2, 8192 for l1); bits: cosine bits per function (0 = 8);
        width: l2 bucket width (0 = from the data); sigma: l1 kernel width
        (0 = from the data).
        Inverted file: ivf: the lists, nlist (an integer, or "auto" or 0:
        round(4 sqrt(n))); pq: IVF-PQ's sub-quantizers, M (dividing d, 8 bits
        each), "MxBITS" or (M, BITS), BITS 1..8; None: IVF-Flat; refine:
        IVF-PQ searches re-rank their best estimates by the exact distance by
        default; train_size: the vectors k-means trains on (0 = min(n,
        max(64 nlist, 256 x 2^BITS))); iterations: k-means iterations (0 =
        20); backend: where the k-means run ("auto": a GPU when usable);
        threads: CPU threads (0 = all cores); precision: the k-means' GEMM
        on a GPU, "fp32" or "tf32" (faster; near-ties may be assigned
        otherwise than in fp32, so the index may differ; deterministic for a
        seed either way; the CPU's GEMM is fp32).
        seed: of the random draws (the same seed and backend, the same file).
        recall: the recall@k in (0, 1] that searches given no candidates,
        radius, nprobe or recall meet, kept in the index (None: 0.9; an
        inverted file chooses its default nprobe for it now; an LSH index
        once it has an estimate, prepare_recall()).
        opts: the build options (sublist_length, part_objects, part_bytes,
        gpu_memory; an inverted file in parts keeps the lists of each part's
        objects in it).  The index stores the vectors too (for re-ranking,
        IVF-Flat and exact search)."""
        xb = _convert.float_matrix(xb, "xb")
        if xb.shape[0] == 0:
            raise InvalidArgumentError("xb holds no vectors")
        if ivf is not None:
            if m or buckets or bits or width or sigma:
                raise InvalidArgumentError("m, buckets, bits, width and sigma are LSH's, not an inverted file's")
            return cls._build_ivf(xb, path, metric, ivf, pq, refine, train_size, iterations, backend, threads, seed,
                                  recall, precision, opts)
        if pq is not None or refine or train_size or iterations or backend != "auto" or threads or precision != "fp32":
            raise InvalidArgumentError("pq, refine, train_size, iterations, backend, threads and precision go with ivf")
        p = L.genie_lsh_params()
        p.metric = L.metric_code(metric)
        p.m = _convert.count(m, "m", 0, 65536)
        p.buckets = _convert.count(buckets, "buckets")
        p.bits = _convert.count(bits, "bits", 0, 16)
        for name, v in (("width", width), ("sigma", sigma)):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not v >= 0:
                raise InvalidArgumentError(f"{name} must be a number >= 0, not {v!r}")
        p.width, p.sigma = float(width), float(sigma)
        p.seed = _convert.count(seed, "seed", 0, (1 << 64) - 1)
        p.recall = _default_recall(recall)
        bo = build_options(opts)
        v = _vectors(xb)
        lib.genie_vectors_build(ctypes.byref(v), ctypes.byref(p), ctypes.byref(bo), os.fsencode(path))
        return cls.open(path)

    @classmethod
    def _build_ivf(cls, xb, path, metric, ivf, pq, refine, train_size, iterations, backend, threads, seed, recall,
                   precision, opts):
        p = L.genie_ivf_params()
        p.metric = L.metric_code(metric)
        p.nlist = 0 if isinstance(ivf, str) and ivf == "auto" else _convert.count(ivf, "ivf (nlist)", 0, 65536)
        if pq is not None:
            if isinstance(pq, str):
                parts = pq.split("x")
                if len(parts) > 2 or not all(x.isdigit() for x in parts):
                    raise InvalidArgumentError(f"pq must be M, 'MxBITS' or (M, BITS), not {pq!r}")
                m_bits = tuple(int(x) for x in parts) + ((8,) if len(parts) == 1 else ())
            else:
                m_bits = pq if isinstance(pq, tuple) else (pq, 8)
            if len(m_bits) != 2:
                raise InvalidArgumentError(f"pq must be M, 'MxBITS' or (M, BITS), not {pq!r}")
            p.pq_m = _convert.count(m_bits[0], "pq (M)", 1, 1 << 24)
            p.pq_bits = _convert.count(m_bits[1], "pq (BITS)", 1, 8)
        p.refine = 1 if refine else 0
        p.train_size = _convert.count(train_size, "train_size", 0, (1 << 32) - 1)
        p.iterations = _convert.count(iterations, "iterations", 0, 100000)
        p.seed = _convert.count(seed, "seed", 0, (1 << 64) - 1)
        p.backend = L.backend_code(backend)
        p.threads = _convert.count(threads, "threads")
        p.recall = _default_recall(recall)
        p.precision = L.precision_code(precision)
        bo = build_options(opts)
        v = _vectors(xb)
        lib.genie_vectors_build_ivf(ctypes.byref(v), ctypes.byref(p), ctypes.byref(bo), os.fsencode(path))
        return cls.open(path)

    @property
    def ivf(self):
        """An inverted-file index's parameters (genie info's ivf block: metric
        as a name, nlist, pq_m, pq_bits, refine, default_nprobe, ...), or None
        for an LSH index."""
        if getattr(self, "_ivf", False) is False:
            info = L.genie_ivf_info()
            with self._use() as h:
                try:
                    lib.genie_vectors_index_ivf(h, ctypes.byref(info))
                except InvalidArgumentError:
                    self._ivf = None
                    return None
            d = L.struct_dict(info)
            d["metric"] = L.metric_name(info.metric)
            d["refine"] = bool(info.refine)
            self._ivf = d
        return self._ivf

    @property
    def params(self):
        """The LSH parameters stored in the index (metric as a name); an
        inverted file has none (see ivf)."""
        p = L.genie_lsh_params()
        with self._use() as h:
            lib.genie_vectors_index_params(h, ctypes.byref(p))
        d = L.struct_dict(p)
        d["metric"] = L.metric_name(p.metric)
        return d

    @property
    def metric(self):
        return (self.ivf or self.params)["metric"]

    @property
    def d(self):
        """Dimensions of the vectors (Faiss's name)."""
        if getattr(self, "_dim", None) is None:
            self._dim = self.base().shape[1]
        return self._dim

    def base(self):
        """The stored base vectors: a read-only (n, d) float32 view into the
        mapped file, valid while the index is open."""
        v = L.genie_vectors()
        with self._use() as h:
            lib.genie_vectors_index_base(h, ctypes.byref(v))
        if v.n == 0:
            return np.zeros((0, v.dim), np.float32)
        buf = (ctypes.c_float * (v.n * v.dim)).from_address(v.data)
        a = np.frombuffer(buf, np.float32).reshape(v.n, v.dim)
        a.flags.writeable = False
        return a

    def _add(self, w, h, xb, labels):
        """add(xb): rows of the index's dimension (float32, as build() takes them)."""
        xb = _convert.float_matrix(xb, "xb", dim=self.d)
        v = _vectors(xb)
        out = np.zeros(xb.shape[0], np.uint64)
        lib.genie_writer_add_vectors(w, ctypes.byref(v), _live.labels_array(labels, xb.shape[0]), out)
        return out

    def search(self, xq, k=10, exact=False, candidates=None, radius=0, backend="auto", threads=0, gpu_memory=0,
               stats=None, recall=None, precision="fp32", nprobe=None, filter=None):
        """The k nearest base vectors of each row of @xq.

        LSH (default): the query's buckets, the top `candidates` (K >= k;
        default: chosen with the radius for recall@k 0.9 from the index's
        INDEX.recall when it has one and k <= 100, else 10 k) objects by
        match count, re-ranked by the true
        distance; radius (l2): also match that many buckets either side.
        An inverted file: the lists of the `nprobe` centroids nearest the
        query (default: the index's, chosen at build for recall@10 0.9),
        k <= 1024; IVF-PQ's `candidates` is its refinement depth (k..2048,
        default the index's); no radius.
        exact=True: exact k-NN (cpu backends on the CPU, cuda ones on the GPU;
        k <= 2048 on the GPU).  Returns (distances float32, ids int64) of
        shape (nq, k), nearest first, ties by smaller id; where fewer than k
        were found, ids are -1 and distances +inf.  stats: a dict to fill
        with the backend that ran and the seconds of each step.  recall: a
        target in (0, 1] instead of candidates and radius: they become the
        smallest whose estimated recall@k (k <= 100) reaches it (stats get
        candidates, radius, recall_estimate and recall_target; an inverted
        file: nprobe and the depth in candidates; docs/VECTORS.md).  With
        none of candidates, radius, recall, nprobe and exact the search
        meets the default target 0.9 (recall_target in stats) when the
        index has an estimate (prepare_recall(), or INDEX.recall).
        precision: with exact=True on a GPU, the GEMM that bounds the
        distances, "fp32", "tf32" or "fp16"; the answers are the same in
        each (genie_precision; l1 takes "fp32" alone).  filter: as
        Index.search (the exact search, the list scans and the re-rank see
        no other vector)."""
        k = _convert.count(k, "k", 1, L.max_k(L.TYPE_VECTORS))
        xq = _convert.float_matrix(xq, "xq", dim=self.d)
        so = L.genie_vsearch_options()
        so.search = L.search_options(k, backend, threads, gpu_memory)
        so.k = k
        so.candidates = 0 if candidates is None else _convert.count(candidates, "candidates", k)
        so.radius = _convert.count(radius, "radius")
        so.exact = 1 if exact else 0
        so.recall = _convert.recall(recall)
        so.precision = L.precision_code(precision)
        so.nprobe = 0 if nprobe is None else _convert.count(nprobe, "nprobe", 1, 65536)
        if so.precision and not exact:
            raise InvalidArgumentError("precision applies to exact=True alone")
        nq = xq.shape[0]
        out = np.empty((nq, k), L.NEIGHBOR_DTYPE)
        n_found = np.empty(nq, np.uint32)
        v = _vectors(xq)
        st = L.genie_search_stats()
        with self._use() as h, self._filter(h, filter) as f:
            so.search.filter = f.handle
            lib.genie_vectors_search(h, ctypes.byref(v), ctypes.byref(so), out, n_found, ctypes.byref(st))
        if stats is not None:
            stats.update(L.stats_dict(st))
        distances = out["distance"].copy()
        ids = out["id"].astype(np.int64)
        missing = np.arange(k)[None, :] >= n_found[:, None]
        if missing.any():
            ids[missing] = -1
            distances[missing] = np.inf
        return distances, ids


def read_vectors(path):
    """Vectors from a file in any format genie reads (fvecs, bvecs, ivecs,
    npy, MNIST IDX, GloVe JSON; gzip'd or not) as a float32 (n, d) array."""
    v = L.genie_vectors()
    lib.genie_vectors_read(os.fsencode(path), ctypes.byref(v))
    try:
        if v.n == 0:
            return np.zeros((0, v.dim), np.float32)
        buf = (ctypes.c_float * (v.n * v.dim)).from_address(v.data)
        return np.frombuffer(buf, np.float32).reshape(v.n, v.dim).copy()
    finally:
        lib.genie_vectors_free(ctypes.byref(v))


def eval_recall(ids, true_ids, k=None, distances=None, true_distances=None):
    """Score an answer as `genie eval` does.

    ids: (nq, >= k) found ids (-1 = none); true_ids: (nq, >= k) exact ids.
    Returns a dict: k_recall_at_k (|found top-k & true top-k| / k,
    averaged), one_recall_at_k (share of queries whose true nearest is in
    the found top-k) and, when both distance arrays are given, ratio (the
    approximation ratio, Eqn. 13 of Zhou et al., "GENIE: A Generic Inverted
    Index Framework for Similarity Search on the GPU", section IV: mean of
    found/true distance by rank, ranks with true distance 0 left out,
    queries with fewer than k found left out)."""
    ids = np.asarray(ids)
    true_ids = np.asarray(true_ids)
    if ids.ndim != 2 or true_ids.ndim != 2 or ids.shape[0] != true_ids.shape[0]:
        raise InvalidArgumentError(f"ids {ids.shape} and true_ids {true_ids.shape} must be 2-D with one row per query")
    if k is None:
        k = ids.shape[1]
    k = _convert.count(k, "k", 1)
    if ids.shape[1] < k or true_ids.shape[1] < k:
        raise InvalidArgumentError(f"k = {k} is more than the columns of ids {ids.shape} or true_ids {true_ids.shape}")
    nq = ids.shape[0]
    found, truth = ids[:, :k].astype(np.int64), true_ids[:, :k].astype(np.int64)
    hits = sum(((found == truth[:, [j]]) & (found >= 0)).sum(axis=1) for j in range(k))
    out = {
        "k_recall_at_k": float(hits.sum() / (k * nq)) if nq else 0.0,
        "one_recall_at_k": float(((found == truth[:, [0]]) & (found >= 0)).any(axis=1).mean()) if nq else 0.0,
    }
    if distances is not None and true_distances is not None:
        d = np.asarray(distances, np.float64)[:, :k]
        t = np.asarray(true_distances, np.float64)[:, :k]
        full = (found >= 0).all(axis=1)
        use = t > 0
        terms = np.where(use, d / np.where(use, t, 1), 0).sum(axis=1)
        n_terms = use.sum(axis=1)
        rows = full & (n_terms > 0)
        out["ratio"] = float((terms[rows] / n_terms[rows]).mean()) if rows.any() else float("nan")
    return out
