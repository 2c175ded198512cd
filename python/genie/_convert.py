"""Arguments in, C arrays out: dtype, shape and contiguity checked, and a
copy made only when the caller's array cannot be passed by pointer.

Arrays that already have the C type and C order (float32 vectors, uint32
keywords) are passed as they are; others are converted when the values fit
(any integer dtype within range, any real float dtype) and refused with an
InvalidArgumentError naming the argument otherwise.
"""
import ctypes
import numbers

import numpy as np

from .errors import InvalidArgumentError

U32_MAX = (1 << 32) - 1


def count(v, what, lo=0, hi=U32_MAX):
    """An integer lo..hi (bools refused)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or not lo <= int(v) <= hi:
        raise InvalidArgumentError(f"{what} must be an integer {lo}..{hi}, not {v!r}")
    return int(v)


def fraction(v, what):
    """A number in (0, 1], or None (none: 0 for the library): a recall target, a similarity threshold."""
    if v is None:
        return 0.0
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 < float(v) <= 1:
        raise InvalidArgumentError(f"{what} must be a number in (0, 1], not {v!r}")
    return float(v)


def recall(v):
    """A recall target in (0, 1], or None (none: 0 for the library)."""
    return fraction(v, "recall")


def uint_array(x, what, dtype=np.uint32, ndim=1):
    """@x as a C-contiguous array of unsigned integers of @dtype."""
    a = np.asarray(x)
    if a.ndim != ndim:
        raise InvalidArgumentError(f"{what} must be a {ndim}-D array of integers, got shape {a.shape}")
    if a.dtype == dtype and a.flags.c_contiguous:
        return a
    if a.size == 0:
        return np.zeros(a.shape, dtype)
    if a.dtype.kind not in "iu" or a.dtype == np.bool_:
        raise InvalidArgumentError(f"{what} must hold integers, not {a.dtype}")
    top = np.iinfo(dtype).max
    lo, hi = a.min(), a.max()
    if lo < 0 or hi > top:
        bad = lo if lo < 0 else hi
        raise InvalidArgumentError(f"{what}: value {bad} is outside 0..{top}")
    return np.ascontiguousarray(a, dtype=dtype)


def float_matrix(x, what, dim=None):
    """@x as a C-contiguous float32 (n, d) array (NaN and infinity: the library refuses them)."""
    a = np.asarray(x)
    if a.ndim != 2:
        raise InvalidArgumentError(f"{what} must be a 2-D array (n, d), got shape {a.shape}"
                                   + (" (use x.reshape(1, -1) for one vector)" if a.ndim == 1 else ""))
    if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
        raise InvalidArgumentError(f"{what} must hold real numbers, not {a.dtype}")
    if a.shape[1] == 0 or a.shape[1] > U32_MAX:
        raise InvalidArgumentError(f"{what} has {a.shape[1]} dimensions")
    if dim is not None and a.shape[0] and a.shape[1] != dim:
        raise InvalidArgumentError(f"{what} has {a.shape[1]} dimensions, the index's vectors {dim}")
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        if a.dtype.kind == "f" and a.size and max(-a.min(), a.max()) > np.finfo(np.float32).max:
            raise InvalidArgumentError(f"{what}: a value does not fit float32")
        a = np.ascontiguousarray(a, dtype=np.float32)
    return a


def strings(xs, what, encoding="utf-8"):
    """A list of bytes from an iterable of str or bytes (a lone str refused)."""
    if isinstance(xs, (str, bytes)):
        raise InvalidArgumentError(f"{what} must be a list of strings, not one string (wrap it: [s])")
    out = []
    try:
        it = iter(xs)
    except TypeError:
        raise InvalidArgumentError(f"{what} must be a list of strings, not {type(xs).__name__}") from None
    for i, s in enumerate(it):
        if isinstance(s, str):
            s = s.encode(encoding)
        elif isinstance(s, (bytes, bytearray, memoryview)):
            s = bytes(s)
        else:
            raise InvalidArgumentError(f"{what}[{i}] must be str or bytes, not {type(s).__name__}")
        out.append(s)
    return out


def c_strings(bs):
    """(char *array, size_t array) for a list of bytes (which must outlive them)."""
    n = len(bs)
    arr = (ctypes.c_char_p * max(n, 1))(*bs)
    lens = (ctypes.c_size_t * max(n, 1))(*[len(b) for b in bs])
    return arr, lens
