"""Keyword queries in the shapes Python users hold them, turned into one
array of genie_item (lo, hi, weight) and CSR offsets for
genie_queries_add_many().

A batch of queries is one of:
  - a 2-D integer array (nq, L): row i is query i's L keywords;
  - a CSR pair (indptr, items) of numpy arrays: query i is
    items[indptr[i]:indptr[i + 1]], items being keywords (integers) or a
    structured array with fields lo, hi and optionally weight;
  - a sequence of queries, each one of: a sequence whose elements are
    keywords (int) or (lo, hi) / (lo, hi, weight) tuples; a 1-D integer
    array of keywords; an (n, 2) or (n, 3) integer array of ranges; a
    structured array with fields lo, hi and optionally weight.
Weights default to 1.  Range and weight rules (lo <= hi, 1..255) are
checked by the library, whose message names the query and the item.
"""
import numpy as np

from . import _convert
from ._lib import ITEM_DTYPE
from .errors import InvalidArgumentError


def to_items(queries):
    """(items: ITEM_DTYPE array, offsets: uint64 array of nq + 1)."""
    if isinstance(queries, np.ndarray):
        if queries.ndim != 2 or queries.dtype.names:
            raise InvalidArgumentError("queries as one array must be 2-D (nq, keywords per query), "
                                       f"got shape {queries.shape}; use a list of arrays otherwise")
        kw = _convert.uint_array(queries.reshape(-1), "queries")
        items = _keywords(kw)
        offsets = np.arange(queries.shape[0] + 1, dtype=np.uint64) * np.uint64(queries.shape[1])
        return items, offsets
    if isinstance(queries, tuple) and len(queries) == 2 and all(isinstance(x, np.ndarray) for x in queries):
        return _csr(*queries)
    if isinstance(queries, (str, bytes)):
        raise InvalidArgumentError("queries must be a list of queries (lists of keywords or ranges), not a string")
    try:
        qs = list(queries)
    except TypeError:
        raise InvalidArgumentError(f"queries must be a list of queries, not {type(queries).__name__}") from None
    parts = [_one(q, i) for i, q in enumerate(qs)]
    offsets = np.zeros(len(parts) + 1, np.uint64)
    if parts:
        np.cumsum([len(p) for p in parts], out=offsets[1:])
    items = np.concatenate(parts) if parts else np.zeros(0, ITEM_DTYPE)
    return np.ascontiguousarray(items), offsets


def _keywords(kw):
    items = np.empty(len(kw), ITEM_DTYPE)
    items["lo"] = kw
    items["hi"] = kw
    items["weight"] = 1
    return items


def _structured(a, what):
    names = a.dtype.names
    if "lo" not in names or "hi" not in names:
        raise InvalidArgumentError(f"{what}: a structured array needs fields lo and hi (and optionally weight), "
                                   f"has {names}")
    if a.dtype == ITEM_DTYPE and a.flags.c_contiguous:
        return a
    items = np.empty(len(a), ITEM_DTYPE)
    items["lo"] = _convert.uint_array(a["lo"], f"{what} lo")
    items["hi"] = _convert.uint_array(a["hi"], f"{what} hi")
    items["weight"] = _convert.uint_array(a["weight"], f"{what} weight") if "weight" in names else 1
    return items


def _ranges(a, what):
    if a.shape[1] not in (2, 3):
        raise InvalidArgumentError(f"{what}: ranges are (lo, hi) or (lo, hi, weight), got rows of {a.shape[1]}")
    a = _convert.uint_array(a, what, ndim=2)
    items = np.empty(len(a), ITEM_DTYPE)
    items["lo"] = a[:, 0]
    items["hi"] = a[:, 1]
    items["weight"] = a[:, 2] if a.shape[1] == 3 else 1
    return items


def _one(q, i):
    what = f"queries[{i}]"
    if isinstance(q, np.ndarray):
        if q.dtype.names:
            return _structured(q.reshape(-1), what)
        if q.ndim == 2:
            return _ranges(q, what)
        return _keywords(_convert.uint_array(q, what))
    if isinstance(q, (str, bytes)) or not hasattr(q, "__len__"):
        raise InvalidArgumentError(f"{what} must be a list of keywords or (lo, hi[, weight]) ranges, not {q!r}")
    if all(isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in q):
        return _keywords(_convert.uint_array(np.array(q), what)) if len(q) else np.zeros(0, ITEM_DTYPE)
    items = np.empty(len(q), ITEM_DTYPE)
    for j, x in enumerate(q):
        if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
            t = (x, x, 1)
        elif isinstance(x, (tuple, list)) and len(x) in (2, 3):
            t = (x[0], x[1], x[2] if len(x) == 3 else 1)
        else:
            raise InvalidArgumentError(f"{what}[{j}]: expected a keyword or (lo, hi[, weight]), not {x!r}")
        for v in t:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= _convert.U32_MAX:
                raise InvalidArgumentError(f"{what}[{j}]: {v!r} is not an integer 0..{_convert.U32_MAX}")
        items[j] = t
    return items


def _csr(indptr, items):
    indptr = _convert.uint_array(indptr, "indptr", dtype=np.uint64)
    if len(indptr) == 0:
        raise InvalidArgumentError("indptr must have nq + 1 entries, got none")
    if len(indptr) > 1 and (np.diff(indptr.astype(np.int64)) < 0).any():
        raise InvalidArgumentError("indptr must not decrease")
    if items.dtype.names:
        items = _structured(items.reshape(-1), "items")
    else:
        items = _keywords(_convert.uint_array(items, "items"))
    if int(indptr[-1]) > len(items):
        raise InvalidArgumentError(f"indptr ends at {int(indptr[-1])}, past the {len(items)} items")
    return items, indptr
