"""genie.TextIndex: short documents, each distinct word one keyword
through a vocabulary stored in the index (Zhou et al., "GENIE: A Generic
Inverted Index Framework for Similarity Search on the GPU", section V-B).
A query document matches by the number of distinct words it shares."""
import ctypes
import os

from . import _convert, _live
from . import _lib as L
from .errors import InvalidArgumentError
from .index import Index, build_options

lib = L.lib


class TextIndex(Index):
    """An index of short documents (type 'text')."""

    _type = L.TYPE_TEXT

    @classmethod
    def build(cls, documents, path, stop_words=None, store_records=True, **opts):
        """Index @documents (str or bytes each; words are lower-cased runs of
        ASCII letters and digits and of bytes >= 0x80) at @path and open it.
        stop_words: words never indexed; store_records: keep each document
        (for record()).  opts: the build options."""
        docs = _convert.strings(documents, "documents")
        if not docs:
            raise InvalidArgumentError("no documents to index")
        stops = _convert.strings(stop_words or [], "stop_words")
        stop_arr = (ctypes.c_char_p * max(len(stops), 1))(*stops)
        bo = build_options(opts)
        b = ctypes.c_void_p()
        lib.genie_text_builder_new(ctypes.byref(b), ctypes.byref(bo), stop_arr, len(stops), 1 if store_records else 0)
        try:
            for d in docs:
                lib.genie_text_builder_add(b, d, len(d))
            lib.genie_text_builder_write(b, os.fsencode(path))
        finally:
            lib.genie_text_builder_free(b)
        return cls.open(path)

    def _add(self, w, h, documents, labels):
        """add(documents): one str or bytes each; their words join the vocabulary."""
        return _live.add_records(w, _convert.strings(documents, "documents"), labels)

    def search(self, texts, k=10, min_count=0, backend="auto", threads=0, gpu_memory=0, stats=None, filter=None):
        """The top-k documents for each text by words shared.  Returns
        (counts, ids) as Index.search does (filter= too); record(id) gives a document."""
        qs = _convert.strings(texts, "texts")
        mc = _convert.count(min_count, "min_count")

        def fill(q, h):
            for t in qs:
                lib.genie_queries_add_text(q, h, t, len(t), mc)

        return self._search(fill, k, backend, threads, gpu_memory, stats, filter)
