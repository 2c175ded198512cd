"""libgenie.so, loaded once: where it is found, every prototype, every
struct mirror.

This is the only module that knows the C layout.  When include/genie/genie.h
changes a struct, change its mirror here (field by field, in order) and the
few option builders below; the rest of the package uses names only.

The library is looked for, in order: the path in $GENIE_LIBRARY, then
libgenie.so next to this file (where `pip install ./python` copies the
build's library).  Only genie_* symbols are used.

Every function that returns a genie_status gets an errcheck that raises the
genie.Error subclass of the status with the library's message (read on the
same thread right after the failing call, as genie_last_error() requires).
ctypes releases the GIL for the length of each call.
"""
import ctypes
import os
from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_size_t, c_uint, c_uint32,
                    c_uint64, c_void_p)

import numpy as np

from . import errors

# ------------------------------------------------------------------ loading


def _load():
    path = os.environ.get("GENIE_LIBRARY")
    if path:
        where = "$GENIE_LIBRARY"
    else:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libgenie.so")
        where = "the package folder"
    if not os.path.exists(path):
        raise ImportError(f"genie: libgenie.so not found at {path} ({where}); build the library "
                          "(scripts/setup) and reinstall the package, or set GENIE_LIBRARY to its path")
    try:
        return ctypes.CDLL(path), path
    except OSError as e:
        raise ImportError(f"genie: cannot load {path}: {e}") from e


lib, path = _load()

# ------------------------------------------------------------ struct mirrors

GENIE_OK = 0
GENIE_EINVAL = -30800

BUILD_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_uint64)
SEARCH_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_uint64, c_uint64)
KMEANS_PROGRESS = ctypes.CFUNCTYPE(None, c_void_p, c_char_p, c_uint32, c_uint32, c_double)


class genie_field_layout(Structure):
    _fields_ = [("type", c_char_p), ("field", c_char_p), ("offset", c_uint32), ("size", c_uint32)]


class genie_build_options(Structure):
    _fields_ = [("size", c_uint32),
                ("sublist_length", c_uint32), ("progress", BUILD_PROGRESS), ("progress_ctx", c_void_p),
                ("part_objects", c_uint64), ("part_bytes", c_uint64), ("part_gpu_memory", c_uint64)]


class genie_index_info(Structure):
    _fields_ = [("type", c_int), ("format_version", c_uint32), ("n_objects", c_uint64), ("n_postings", c_uint64),
                ("n_keywords", c_uint64), ("n_sublists", c_uint64), ("sublist_length", c_uint32),
                ("max_object_length", c_uint32), ("longest_list", c_uint64), ("n_words", c_uint64),
                ("has_labels", c_int), ("has_records", c_int), ("file_size", c_uint64)]


class genie_part_info(Structure):
    _fields_ = [("first_object", c_uint64), ("n_objects", c_uint64), ("n_postings", c_uint64),
                ("n_keywords", c_uint64), ("n_sublists", c_uint64), ("max_object_length", c_uint32),
                ("longest_list", c_uint64), ("offset", c_uint64), ("bytes", c_uint64)]


class genie_object(Structure):
    _fields_ = [("keywords", c_void_p), ("n_keywords", c_size_t), ("has_label", c_int), ("label", c_uint64),
                ("record", c_void_p), ("record_len", c_size_t)]


class genie_live_info(Structure):
    _fields_ = [("live", c_int), ("base_objects", c_uint64), ("added", c_uint64), ("deleted", c_uint64),
                ("log_bytes", c_uint64), ("torn_bytes", c_uint64)]


class genie_item(Structure):
    _fields_ = [("lo", c_uint32), ("hi", c_uint32), ("weight", c_uint32)]


class genie_search_options(Structure):
    _fields_ = [("size", c_uint32), ("backend", c_int), ("k", c_uint32), ("threads", c_uint), ("gpu_memory", c_uint64),
                ("load_balance", c_int), ("serial_upload", c_int), ("progress", SEARCH_PROGRESS),
                ("progress_ctx", c_void_p), ("gpus", POINTER(c_int)), ("n_gpus", c_uint), ("gpu_mode", c_int),
                ("time_phases", c_int),
                ("cancel", c_void_p), ("filter", c_void_p)]


class genie_gpu_phases(Structure):
    _fields_ = [("plan_ms", c_double), ("stage_ms", c_double), ("upload_ms", c_double), ("count_ms", c_double),
                ("select_ms", c_double), ("download_ms", c_double), ("collect_ms", c_double), ("total_ms", c_double),
                ("calls", c_uint64), ("batches", c_uint64)]


class genie_search_stats(Structure):
    _fields_ = [("backend", c_int), ("n_gpus", c_uint32), ("gpu_mode", c_int), ("n_parts", c_uint32),
                ("streamed", c_int), ("overlapped", c_int),
                ("part_seconds", c_double), ("merge_seconds", c_double), ("release_seconds", c_double),
                ("upload_seconds", c_double), ("wait_seconds", c_double), ("total_seconds", c_double),
                ("prepare_seconds", c_double), ("match_seconds", c_double), ("rerank_seconds", c_double),
                ("verified", c_uint64), ("rounds", c_uint32), ("fallback", c_uint64), ("scan_backend", c_int),
                ("candidates", c_uint32), ("radius", c_uint32), ("recall_estimate", c_double),
                ("recall_edit_rate", c_double), ("phases", genie_gpu_phases), ("nprobe", c_uint32),
                ("recall_target", c_double)]


class genie_seq_options(Structure):
    _fields_ = [("size", c_uint32),
                ("k", c_uint32), ("candidates", c_uint32), ("max_candidates", c_uint32), ("exact", c_int),
                ("certify_only", c_int), ("recall", c_double)]


class genie_seq_hit(Structure):
    _fields_ = [("object", c_uint32), ("distance", c_uint32), ("count", c_uint32)]


class genie_set_params(Structure):
    _fields_ = [("hashes", c_uint32), ("seed", c_uint32), ("separator", c_char)]


class genie_set_options(Structure):
    _fields_ = [("size", c_uint32), ("k", c_uint32), ("candidates", c_uint32), ("exact", c_int), ("recall", c_double),
                ("measure", c_int), ("min_similarity", c_double)]


class genie_set_hit(Structure):
    _fields_ = [("object", c_uint32), ("shared", c_uint32), ("union_size", c_uint32), ("count", c_uint32),
                ("similarity", c_double)]


class genie_set_plan(Structure):
    _fields_ = [("method", c_int), ("candidates", c_uint32), ("recall", c_double), ("exact_cost", c_double),
                ("minhash_cost", c_double), ("reason", c_char_p)]


class genie_table_options(Structure):
    _fields_ = [("size", c_uint32), ("bins", c_uint32), ("columns", c_char_p), ("no_records", c_int)]


class genie_vectors(Structure):
    _fields_ = [("n", c_uint64), ("dim", c_uint32), ("data", c_void_p)]


class genie_lsh_params(Structure):
    _fields_ = [("metric", c_int), ("m", c_uint32), ("buckets", c_uint32), ("bits", c_uint32), ("width", c_float),
                ("sigma", c_float), ("seed", c_uint64), ("recall", c_double)]


class genie_ivf_params(Structure):
    _fields_ = [("metric", c_int), ("nlist", c_uint32), ("pq_m", c_uint32), ("pq_bits", c_uint32), ("refine", c_int),
                ("train_size", c_uint64), ("iterations", c_uint32), ("seed", c_uint64), ("backend", c_int),
                ("threads", c_uint), ("progress", KMEANS_PROGRESS), ("progress_ctx", c_void_p),
                ("recall", c_double), ("precision", c_int)]


class genie_ivf_info(Structure):
    _fields_ = [("metric", c_int), ("dim", c_uint32), ("nlist", c_uint32), ("pq_m", c_uint32), ("pq_bits", c_uint32),
                ("refine", c_int), ("n", c_uint64), ("train_size", c_uint64), ("seed", c_uint64),
                ("iterations", c_uint32), ("default_nprobe", c_uint32), ("default_refine", c_uint32),
                ("longest_list", c_uint64), ("empty_lists", c_uint64), ("default_recall", c_double)]


class genie_vsearch_options(Structure):
    _fields_ = [("size", c_uint32),
                ("search", genie_search_options), ("k", c_uint32), ("candidates", c_uint32), ("radius", c_uint32),
                ("exact", c_int), ("recall", c_double), ("precision", c_int), ("nprobe", c_uint32)]


class genie_docs_params(Structure):
    _fields_ = [("alpha", c_double), ("k1", c_double), ("b", c_double), ("damping", c_double),
                ("tolerance", c_double), ("max_iterations", c_uint32)]


class genie_docs_info(Structure):
    _fields_ = [("n_docs", c_uint64), ("n_postings", c_uint64), ("n_words", c_uint64), ("alpha", c_double),
                ("k1", c_double), ("b", c_double), ("avg_length", c_double), ("score_source", c_int),
                ("n_links", c_uint64), ("iterations", c_uint32)]


class genie_docs_options(Structure):
    _fields_ = [("size", c_uint32),
                ("k", c_uint32), ("mode", c_int), ("exhaustive", c_int), ("threads", c_uint), ("backend", c_int),
                ("gpu_memory", c_uint64), ("cache_fraction", c_double), ("plan", c_void_p), ("filter", c_void_p)]


class genie_docs_hit(Structure):
    _fields_ = [("doc", c_uint32), ("record", c_uint32), ("score", c_double), ("bm25", c_double),
                ("pagerank", c_double)]


class genie_docs_stats(Structure):
    _fields_ = [("postings_read", c_uint64), ("postings_total", c_uint64), ("docs_scored", c_uint64),
                ("stopped_early", c_uint64), ("seconds", c_double), ("backend", c_int), ("gpu_queries", c_uint64),
                ("post_processed", c_uint64), ("cache_bytes", c_uint64), ("batches", c_uint64),
                ("bytes_moved", c_uint64), ("gpu_seconds", c_double), ("post_seconds", c_double),
                ("prepare_seconds", c_double), ("setup_seconds", c_double), ("batch_seconds", c_double),
                ("h2d_seconds", c_double), ("kernel_seconds", c_double), ("wait_seconds", c_double)]


# numpy views of arrays the library reads or fills in place.
ITEM_DTYPE = np.dtype([("lo", "<u4"), ("hi", "<u4"), ("weight", "<u4")])
NEIGHBOR_DTYPE = np.dtype([("id", "<u4"), ("distance", "<f4")])
assert ITEM_DTYPE.itemsize == ctypes.sizeof(genie_item)
DOCS_HIT_DTYPE = np.dtype([("doc", "<u4"), ("record", "<u4"), ("score", "<f8"), ("bm25", "<f8"),
                           ("pagerank", "<f8")])
assert NEIGHBOR_DTYPE.itemsize == 8
assert DOCS_HIT_DTYPE.itemsize == ctypes.sizeof(genie_docs_hit)

# --------------------------------------------------------------- prototypes


def _array(dtype):
    """A C-contiguous numpy array of @dtype by pointer (numpy.ctypeslib checks it)."""
    return np.ctypeslib.ndpointer(dtype=dtype, flags="C_CONTIGUOUS")


def _array_or_null(dtype):
    """As _array(), or None for a NULL pointer."""
    base = _array(dtype)

    def from_param(cls, obj):
        return None if obj is None else base.from_param(obj)

    return type(base.__name__ + "_or_null", (base,), {"from_param": classmethod(from_param)})


def _errcheck(status, func, args):
    if status != GENIE_OK:
        raise errors.from_status(status, lib.genie_last_error().decode("utf-8", "replace"),
                                 lib.genie_strerror(status).decode("utf-8", "replace"))
    return status


P = POINTER
_HANDLE = c_void_p
_OUT_HANDLE = P(c_void_p)
_STATUS = object()  # marks a genie_status result: a c_int that gets _errcheck
_PROTOTYPES = {
    # errors, version
    "genie_strerror": (c_char_p, [c_int]),
    "genie_last_error": (c_char_p, []),
    "genie_version": (c_char_p, []),
    "genie_index_type_name": (c_char_p, [c_int]),
    "genie_index_type_max_k": (c_uint32, [c_int]),
    "genie_backend_name": (c_char_p, [c_int]),
    "genie_backend_parse": (_STATUS, [c_char_p, P(c_int)]),
    "genie_backend_list": (c_size_t, [c_int, c_char_p, c_size_t]),
    "genie_struct_layouts": (P(genie_field_layout), [P(c_size_t)]),
    "genie_gpu_mode_name": (c_char_p, [c_int]),
    "genie_metric_name": (c_char_p, [c_int]),
    "genie_metric_parse": (_STATUS, [c_char_p, P(c_int)]),
    "genie_precision_parse": (_STATUS, [c_char_p, P(c_int)]),
    "genie_cuda_built": (c_int, []),
    "genie_cuda_available": (c_int, []),
    # keyword building
    "genie_builder_new": (_STATUS, [_OUT_HANDLE, P(genie_build_options)]),
    "genie_builder_add_many": (_STATUS, [_HANDLE, _array(np.uint32), _array(np.uint64), c_size_t,
                                         _array_or_null(np.uint64)]),
    "genie_builder_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_builder_free": (None, [_HANDLE]),
    # text
    "genie_text_builder_new": (_STATUS, [_OUT_HANDLE, P(genie_build_options), P(c_char_p), c_size_t, c_int]),
    "genie_text_builder_add": (_STATUS, [_HANDLE, c_char_p, c_size_t]),
    "genie_text_builder_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_text_builder_free": (None, [_HANDLE]),
    # index
    "genie_index_open": (_STATUS, [c_char_p, _OUT_HANDLE]),
    "genie_index_close": (None, [_HANDLE]),
    "genie_index_get_info": (None, [_HANDLE, P(genie_index_info)]),
    "genie_index_label": (_STATUS, [_HANDLE, c_uint32, P(c_uint64)]),
    "genie_index_record": (_STATUS, [_HANDLE, c_uint32, P(c_void_p), P(c_size_t)]),
    "genie_index_parts": (c_uint32, [_HANDLE]),
    "genie_index_part_info": (_STATUS, [_HANDLE, c_uint32, P(genie_part_info)]),
    "genie_index_refresh": (_STATUS, [_HANDLE, _OUT_HANDLE]),
    "genie_index_live_info": (None, [_HANDLE, P(genie_live_info)]),
    "genie_index_is_deleted": (c_int, [_HANDLE, c_uint64]),
    "genie_recall_prepare": (_STATUS, [_HANDLE, c_uint]),
    # filters
    "genie_filter_new": (_STATUS, [_OUT_HANDLE, c_uint64]),
    "genie_filter_free": (None, [_HANDLE]),
    "genie_filter_set": (_STATUS, [_HANDLE, c_uint64, c_int]),
    "genie_filter_set_all": (None, [_HANDLE, c_int]),
    "genie_filter_intersect": (_STATUS, [_HANDLE, _HANDLE]),
    "genie_filter_count": (c_uint64, [_HANDLE]),
    "genie_filter_allow_labels": (_STATUS, [_HANDLE, _HANDLE, _array(np.uint64), c_size_t, P(c_size_t)]),
    # writes (live indexes)
    "genie_writer_open": (_STATUS, [c_char_p, _OUT_HANDLE]),
    "genie_writer_close": (None, [_HANDLE]),
    "genie_writer_add": (_STATUS, [_HANDLE, c_void_p, c_size_t, _array(np.uint64)]),
    "genie_writer_add_records": (_STATUS, [_HANDLE, P(c_char_p), P(c_size_t), c_size_t, _array_or_null(np.uint64),
                                           _array(np.uint64)]),
    "genie_writer_add_vectors": (_STATUS, [_HANDLE, P(genie_vectors), _array_or_null(np.uint64),
                                           _array(np.uint64)]),
    "genie_writer_delete": (_STATUS, [_HANDLE, _array(np.uint64), c_size_t, P(c_size_t)]),
    "genie_writer_compact": (_STATUS, [_HANDLE]),
    "genie_recall_predict": (_STATUS, [_HANDLE, c_uint32, c_uint32, c_uint32, P(c_double), P(c_uint32)]),
    # queries, search, results
    "genie_queries_new": (_STATUS, [_OUT_HANDLE]),
    "genie_queries_add_many": (_STATUS, [_HANDLE, _array(ITEM_DTYPE), _array(np.uint64), c_size_t, c_uint32]),
    "genie_queries_add_text": (_STATUS, [_HANDLE, _HANDLE, c_char_p, c_size_t, c_uint32]),
    "genie_queries_count": (c_size_t, [_HANDLE]),
    "genie_queries_free": (None, [_HANDLE]),
    "genie_search_with_stats": (_STATUS, [_HANDLE, _HANDLE, P(genie_search_options), _OUT_HANDLE,
                                          P(genie_search_stats)]),
    "genie_results_queries": (c_size_t, [_HANDLE]),
    "genie_results_copy": (_STATUS, [_HANDLE, c_uint32, _array(np.int64), _array_or_null(np.int32)]),
    "genie_results_free": (None, [_HANDLE]),
    # sequences
    "genie_seq_builder_new": (_STATUS, [_OUT_HANDLE, P(genie_build_options), c_uint32]),
    "genie_seq_builder_add": (_STATUS, [_HANDLE, c_char_p, c_size_t]),
    "genie_seq_builder_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_seq_builder_free": (None, [_HANDLE]),
    "genie_seq_gram_length": (_STATUS, [_HANDLE, P(c_uint32)]),
    "genie_seq_search": (_STATUS, [_HANDLE, P(c_char_p), P(c_size_t), c_size_t, P(genie_seq_options),
                                   P(genie_search_options), _OUT_HANDLE]),
    "genie_seq_results_stats": (None, [_HANDLE, P(genie_search_stats)]),
    "genie_seq_results_get": (P(genie_seq_hit), [_HANDLE, c_size_t, P(c_size_t), P(c_int), P(c_uint32)]),
    "genie_seq_results_free": (None, [_HANDLE]),
    # sets
    "genie_set_builder_new": (_STATUS, [_OUT_HANDLE, P(genie_build_options), P(genie_set_params)]),
    "genie_set_builder_add": (_STATUS, [_HANDLE, c_char_p, c_size_t]),
    "genie_set_builder_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_set_builder_free": (None, [_HANDLE]),
    "genie_set_search": (_STATUS, [_HANDLE, P(c_char_p), P(c_size_t), c_size_t, P(genie_set_options),
                                   P(genie_search_options), _OUT_HANDLE]),
    "genie_set_results_stats": (None, [_HANDLE, P(genie_search_stats)]),
    "genie_set_results_get": (P(genie_set_hit), [_HANDLE, c_size_t, P(c_size_t)]),
    "genie_set_results_plan": (None, [_HANDLE, P(genie_set_plan)]),
    "genie_set_results_free": (None, [_HANDLE]),
    "genie_set_measure_parse": (_STATUS, [c_char_p, P(c_int)]),
    # tables
    "genie_table_build": (_STATUS, [c_char_p, P(genie_table_options), P(genie_build_options), c_char_p]),
    "genie_table_open": (_STATUS, [_HANDLE, _OUT_HANDLE]),
    "genie_table_free": (None, [_HANDLE]),
    "genie_table_columns": (c_size_t, [_HANDLE]),
    "genie_table_column": (c_char_p, [_HANDLE, c_size_t, P(c_int)]),
    "genie_table_bins": (c_uint32, [_HANDLE]),
    "genie_table_set_radius": (_STATUS, [_HANDLE, c_char_p, c_uint32]),
    "genie_table_set_weight": (_STATUS, [_HANDLE, c_char_p, c_uint32]),
    "genie_table_add_query": (_STATUS, [_HANDLE, _HANDLE, P(c_char_p), P(c_char_p), c_size_t, c_uint32]),
    "genie_table_reader_open": (_STATUS, [_OUT_HANDLE, _HANDLE, c_char_p]),
    "genie_table_reader_read": (_STATUS, [_HANDLE, _HANDLE, c_size_t, c_uint32, P(c_size_t)]),
    "genie_table_reader_close": (None, [_HANDLE]),
    # vectors
    "genie_vectors_build": (_STATUS, [P(genie_vectors), P(genie_lsh_params), P(genie_build_options), c_char_p]),
    "genie_vectors_index_params": (_STATUS, [_HANDLE, P(genie_lsh_params)]),
    "genie_vectors_build_ivf": (_STATUS, [P(genie_vectors), P(genie_ivf_params), P(genie_build_options), c_char_p]),
    "genie_vectors_index_ivf": (_STATUS, [_HANDLE, P(genie_ivf_info)]),
    "genie_vectors_index_base": (_STATUS, [_HANDLE, P(genie_vectors)]),
    "genie_vectors_search": (_STATUS, [_HANDLE, P(genie_vectors), P(genie_vsearch_options),
                                       _array(NEIGHBOR_DTYPE), _array(np.uint32), P(genie_search_stats)]),
    "genie_vectors_read": (_STATUS, [c_char_p, P(genie_vectors)]),
    "genie_vectors_free": (None, [P(genie_vectors)]),
    # docs
    "genie_docs_params_default": (None, [P(genie_docs_params)]),
    "genie_docs_builder_new": (_STATUS, [_OUT_HANDLE, P(genie_build_options), P(genie_docs_params), P(c_char_p),
                                         c_size_t, c_int]),
    "genie_docs_builder_add": (_STATUS, [_HANDLE, c_char_p, c_size_t]),
    "genie_docs_builder_add_link": (_STATUS, [_HANDLE, c_uint64, c_uint64]),
    "genie_docs_builder_set_scores": (_STATUS, [_HANDLE, _array(np.float64), c_size_t]),
    "genie_docs_builder_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_docs_builder_free": (None, [_HANDLE]),
    "genie_docs_open": (_STATUS, [_HANDLE, _OUT_HANDLE]),
    "genie_docs_close": (None, [_HANDLE]),
    "genie_docs_get_info": (None, [_HANDLE, P(genie_docs_info)]),
    "genie_docs_document": (_STATUS, [_HANDLE, c_uint32, P(c_uint32), P(c_uint32), P(c_double), P(c_double)]),
    "genie_docs_search": (_STATUS, [_HANDLE, P(c_char_p), P(c_size_t), c_size_t, P(genie_docs_options),
                                    _OUT_HANDLE]),
    "genie_docs_results_queries": (c_size_t, [_HANDLE]),
    "genie_docs_results_get": (c_void_p, [_HANDLE, c_size_t, P(c_size_t)]),
    "genie_docs_results_stats": (None, [_HANDLE, P(genie_docs_stats)]),
    "genie_docs_results_free": (None, [_HANDLE]),
    "genie_docs_plan_build": (_STATUS, [_HANDLE, P(c_char_p), P(c_size_t), c_size_t, c_uint32, c_int, c_double,
                                        _OUT_HANDLE]),
    "genie_docs_plan_write": (_STATUS, [_HANDLE, c_char_p]),
    "genie_docs_plan_read": (_STATUS, [_HANDLE, c_char_p, _OUT_HANDLE]),
    "genie_docs_plan_free": (None, [_HANDLE]),
}

for _name, (_res, _args) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype = c_int if _res is _STATUS else _res
    _fn.argtypes = _args
    if _res is _STATUS:
        _fn.errcheck = _errcheck

# ---------------------------------------------------------- option builders

BUILD_OPTION_NAMES = ("sublist_length", "part_objects", "part_bytes", "gpu_memory")


# ------------------------------------------------------------ index types


def _index_types():
    """The index types' names in genie_index_type order, as the library names them."""
    names = []
    while True:
        name = lib.genie_index_type_name(len(names)).decode()
        if name == "?":
            return tuple(names)
        names.append(name)


INDEX_TYPES = _index_types()
TYPE_KEYWORDS, TYPE_TEXT, TYPE_SETS, TYPE_SEQUENCES, TYPE_TABLE, TYPE_VECTORS, TYPE_DOCS, TYPE_METRIC = (
    INDEX_TYPES.index(name) for name in ("keywords", "text", "sets", "sequences", "table", "vectors", "docs", "metric"))


def max_k(index_type):
    """The largest k a search of an index of this type (an L.TYPE_* value) takes: GENIE_*_MAX_K."""
    return lib.genie_index_type_max_k(index_type)


def build_options(sublist_length=0, part_objects=0, part_bytes=0, gpu_memory=0):
    """genie_build_options; gpu_memory (part_gpu_memory in C, --gpu-memory of
    genie build) is the GPU budget the parts are cut for."""
    o = genie_build_options()
    o.sublist_length = _u(sublist_length, 32, "sublist_length")
    o.part_objects = _u(part_objects, 64, "part_objects")
    o.part_bytes = _u(part_bytes, 64, "part_bytes")
    o.part_gpu_memory = _u(gpu_memory, 64, "gpu_memory")
    return o


def _parse_name(parse, name, expected):
    """The code the C parser `parse` gives `name`; an unknown name raises through its status check."""
    v = c_int()
    if not isinstance(name, str):
        raise errors.InvalidArgumentError(f"{expected}, not {name!r}")
    parse(name.encode(), ctypes.byref(v))
    return v.value


def backend_names(usable=False):
    """The backend names the library knows (or, usable, those that can run here), "auto" first."""
    n = lib.genie_backend_list(1 if usable else 0, None, 0)
    buf = ctypes.create_string_buffer(n + 1)
    lib.genie_backend_list(1 if usable else 0, buf, n + 1)
    return buf.value.decode().split(", ")


def backend_code(name):
    return _parse_name(lib.genie_backend_parse, name, "backend must be a name such as 'cpu' or 'cuda'")


def search_options(k, backend="auto", threads=0, gpu_memory=0, filter_handle=None):
    """genie_search_options for a search of k results per query (filter_handle: a genie_filter, or None)."""
    o = genie_search_options()
    o.filter = filter_handle
    o.backend = backend_code(backend)
    o.k = k
    o.threads = _u(threads, 32, "threads")
    o.gpu_memory = _u(gpu_memory, 64, "gpu_memory")
    return o


def stats_dict(st):
    """A filled genie_search_stats as a dict, the backend as its name."""
    d = struct_dict(st)
    d["phases"] = struct_dict(st.phases)
    d["backend"] = lib.genie_backend_name(st.backend).decode()
    d["gpu_mode"] = (lib.genie_gpu_mode_name(st.gpu_mode) or b"?").decode()
    d["scan_backend"] = lib.genie_backend_name(st.scan_backend).decode()
    return d


def metric_code(name):
    return _parse_name(lib.genie_metric_parse, name, "metric must be a name such as 'l2'")


def set_measure_code(name):
    return _parse_name(lib.genie_set_measure_parse, name,
                       "measure must be 'jaccard', 'cosine', 'dice', 'overlap' or 'containment'")


def precision_code(name):
    return _parse_name(lib.genie_precision_parse, name, "precision must be 'fp32', 'tf32' or 'fp16'")


def metric_name(code):
    return lib.genie_metric_name(code).decode()


def struct_dict(s):
    """A ctypes struct as a dict of its fields (for info records)."""
    return {name: getattr(s, name) for name, _ in s._fields_}


def _u(v, bits, what):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= int(v) < (1 << bits):
        raise errors.InvalidArgumentError(f"{what} must be an integer 0..{(1 << bits) - 1}, not {v!r}")
    return int(v)


def version():
    return lib.genie_version().decode()
