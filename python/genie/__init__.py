"""genie: batched similarity search over the GENIE match-count inverted
index, from Python: numpy arrays in, numpy arrays out.

    import genie
    index = genie.VectorIndex.build(xb, "fm.genie", metric="l2")
    D, I = index.search(xq, 10)                 # LSH + re-rank
    D, I = index.search(xq, 10, exact=True)     # exact k-NN

    with genie.Index.open("sets.genie") as idx:
        counts, ids = idx.search([[3, (10, 20, 2), 7]], k=5)

The package is a thin layer over libgenie.so (ctypes): an index stays open
and mapped in the process, so repeated searches pay no start-up cost, and
the GIL is released while the library searches.  docs/PYTHON.md has the
whole API.
"""
from . import _lib
from .docs import DocsIndex
from .errors import (CancelledError, CorruptIndexError, Error, FileIOError, FormatError, GPUError,
                     InvalidArgumentError, NotSupportedError, OutOfMemoryError, RangeError)
from .index import Index, build_keywords
from .sequences import SequenceHit, SequenceIndex, SequenceResult
from .sets import SetIndex
from .table import TableIndex
from .text import TextIndex
from .vectors import VectorIndex, eval_recall, read_vectors

__version__ = _lib.version()

ITEM_DTYPE = _lib.ITEM_DTYPE

_BY_TYPE = {"keywords": Index, "text": TextIndex, "sets": SetIndex, "sequences": SequenceIndex,
            "table": TableIndex, "vectors": VectorIndex, "docs": DocsIndex}


def open(path):  # noqa: A001 - genie.open mirrors Index.open
    """Open an index with the class of its type (TextIndex for a text index, ...)."""
    with Index.open(path) as idx:
        kind = idx.info["type"]
    return _BY_TYPE.get(kind, Index).open(path)


def backends(usable=False):
    """The names a search's backend argument takes, "auto" first: every
    backend the library knows, or (usable=True) those that can run in this
    process (this loads the CUDA module where one is built)."""
    return _lib.backend_names(usable)


def cuda_available():
    """True when libgenie was built with CUDA and a GPU is usable."""
    return bool(_lib.lib.genie_cuda_available())


def library_path():
    """The libgenie.so this package loaded."""
    return _lib.path


__all__ = ["Error", "InvalidArgumentError", "OutOfMemoryError", "FileIOError", "CorruptIndexError", "FormatError",
           "NotSupportedError", "GPUError", "RangeError", "CancelledError", "Index", "build_keywords", "TextIndex",
           "SetIndex",
           "SequenceIndex", "SequenceHit", "SequenceResult", "TableIndex", "VectorIndex", "DocsIndex", "eval_recall",
           "read_vectors", "open", "backends", "cuda_available", "library_path", "ITEM_DTYPE", "__version__"]
