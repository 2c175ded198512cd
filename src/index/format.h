/*
 * The genie index file, format versions 3 and 4.
 *
 * One file holds one index: the inverted lists (the "List Array" of
 * Zhou et al. (GENIE) III-B), the position map from keyword to list, the sublist
 * split used for load balance (III-B1), and optional per-object labels,
 * stored records, a vocabulary and the front-end's parameters.
 * Everything is little-endian and every section starts on a 64-byte
 * boundary, so the file can be memory-mapped and its arrays used in place.
 *
 * Parts (III-D, "multiple loadings").  The objects are cut by id into
 * n_parts >= 1 consecutive ranges, and each range gets its own five list
 * sections (KEYWORDS .. KEYWORD_SUBLISTS) describing only its objects, so a
 * part can be mapped, validated, uploaded and searched alone, and parts can
 * stream through a GPU (or through a host's RAM) one after another.  Object
 * ids inside a part's POSTINGS are part-relative: 0 .. part n_objects-1;
 * the global id is first_object + the stored id.  Part-relative ids let a
 * backend treat a part exactly like a whole index (its count arrays sized
 * by the part) and keep ids below 2^32 per part.  A one-part file is the
 * common case; its part-relative ids are the global ids.
 *
 * Header (offsets in bytes):
 *
 *   off  size  field
 *     0     8  magic "GENIEIDX"
 *     8     4  format version: 3, or 4 when flag bit 4 is set (the
 *                vector index sections); a file without them is written
 *                as version 3, byte for byte what builds before version
 *                4 wrote, so that they read it
 *    12     4  header size in bytes, section table included:
 *                96 + 32 * n_sections
 *    16     8  file size in bytes
 *    24     8  n_objects        objects, ids 0..n_objects-1 (< 2^32)
 *    32     8  n_postings       total postings, all parts
 *    40     8  n_keywords       distinct keywords of the whole index
 *    48     8  n_sublists       sublists, all parts
 *    56     8  n_words          vocabulary words (text and docs indexes,
 *                                a sets index's elements), else 0
 *    64     4  sublist_length   L of III-B1, >= 1
 *    68     4  max_object_length  most keywords in one object
 *    72     4  index type       0 keywords, 1 text, 2 sets, 3 sequences,
 *                                4 table, 5 vectors, 6 docs, 7 metric
 *    76     4  flags            bit 0 labels, bit 1 records, bit 2 vocabulary,
 *                                bit 3 front-end parameters, bit 4 vector
 *                                index sections (version 4, vectors only)
 *    80     4  n_sections       8 + 5 * n_parts (+ 3 with flag bit 4)
 *    84     4  header CRC32C    over bytes 0..header size, this field as 0
 *    88     4  n_parts          >= 1; exactly 1 when n_objects is 0
 *    92     4  0
 *    96        section table: n_sections entries of 32 bytes
 *
 * Section table entry:   +0 u32 id   +4 u32 part   +8 u64 offset
 *                        +16 u64 size   +24 u32 CRC32C of the section's
 *                        bytes   +28 u32 0
 *
 * The table lists the sections in file order: first the seven whole-index
 * sections 6..12 (part 0), then PARTS (13, part 0), then for each part p in
 * turn its sections 1..5 (part p), then (flag bit 4) the vector index
 * sections 14..16 (part 0).  Each section starts at the first 64-byte
 * boundary after the previous one (the header for the first), zero bytes in
 * between, the file ending where the last one ends.  An absent optional
 * section has size 0.
 *
 *   id  name             contents
 *    6  LABELS           u64[n_objects] (flag bit 0)
 *    7  RECORD_OFFSETS   u64[n_objects+1] (flag bit 1)
 *    8  RECORD_BYTES     record i is bytes[off[i], off[i+1])
 *    9  WORD_OFFSETS     u64[n_words+1] (flag bit 2): word i stands for
 *                        keyword i (text, docs; a sets index's words are
 *                        its elements, whose keywords its FRONTEND says)
 *   10  WORD_BYTES       word i is bytes[off[i], off[i+1])
 *   11  WORD_ORDER       u32[n_words]: word ids in byte-wise order (lookup)
 *   12  FRONTEND         (flag bit 3) the parameters of the front-end that
 *                        made the keywords (hash seeds, n of the n-grams,
 *                        bin edges, ...): bytes the front-end of the index
 *                        type reads and validates field by field
 *                        (util/codec.h); opaque to the index
 *   13  PARTS            n_parts entries of 48 bytes:
 *                          +0 u64 first_object  +8 u64 n_objects
 *                          +16 u64 n_postings   +24 u64 n_keywords
 *                          +32 u64 n_sublists   +40 u32 max_object_length
 *                          +44 u32 0
 *                        consecutive ranges covering 0..n_objects-1, each
 *                        with at least one object (unless the index has
 *                        none); the counts add up to the header's
 *   Per part, its counts from PARTS:
 *    1  KEYWORDS         u32[n_keywords], strictly increasing
 *    2  LIST_OFFSETS     u64[n_keywords+1]: list j is postings[off[j], off[j+1])
 *    3  POSTINGS         u32[n_postings]: part-relative object ids,
 *                        increasing within a list
 *    4  SUBLISTS         u64[n_sublists+1]: posting offset where each sublist
 *                        starts (every list cut into pieces of at most L)
 *    5  KEYWORD_SUBLISTS u64[n_keywords+1]: first sublist of each list
 *
 *   Vector index sections (flag bit 4; an inverted-file vectors index,
 *   transform/vectors_ivf.h: its lists are the keyword lists, object i
 *   having one keyword, its list's number, so each part's POSTINGS holds
 *   the ids of its objects list by list).  Their sizes follow from the
 *   front-end's parameters, which the front-end checks against them:
 *   14  IVF_CENTROIDS    f32[nlist x dim]: the coarse quantizer
 *   15  PQ_CODEBOOKS     f32[M x 2^bits x dim / M] (IVF-PQ), else empty
 *   16  PQ_CODES         u8[n_postings x M] (IVF-PQ): the codes of the
 *                        residuals, parallel to the parts' POSTINGS in
 *                        part order (part p's from its first_object, one
 *                        posting per object); else empty
 *
 * A query item [lo, hi] maps, by binary search in a part's KEYWORDS, to a
 * run of that part's lists that is one contiguous slice of its POSTINGS, and
 * to one contiguous run of its sublists.
 */
#ifndef GENIE_INDEX_FORMAT_H
#define GENIE_INDEX_FORMAT_H

#include <stdint.h>

#define FORMAT_MAGIC "GENIEIDX"
#define FORMAT_VERSION 4u          /* the newest this build reads and writes */
#define FORMAT_VERSION_BASE 3u     /* written for a file without vector index sections */
#define FORMAT_FIXED_HEADER 96u
#define FORMAT_ENTRY_SIZE 32u
#define FORMAT_ALIGN 64u
#define FORMAT_N_GLOBAL 8u         /* sections 6..13, before the parts */
#define FORMAT_N_PART_SECTIONS 5u  /* sections 1..5 of each part */
#define FORMAT_PART_ENTRY 48u      /* bytes per part in PARTS */
#define FORMAT_N_VECTOR_SECTIONS 3u /* sections 14..16, after the parts (flag bit 4) */
#define FORMAT_N_SECTION_IDS 16u
/* A part count that keeps the header size a u32. */
#define FORMAT_MAX_PARTS ((UINT32_MAX - FORMAT_FIXED_HEADER) / FORMAT_ENTRY_SIZE / FORMAT_N_PART_SECTIONS - 2)

/* Sections of a file of @p nParts parts, with the vector index sections when @p vector is non-zero. */
static inline uint64_t format_n_sections(uint64_t nParts, int vector)
{
    return FORMAT_N_GLOBAL + FORMAT_N_PART_SECTIONS * nParts + (vector ? FORMAT_N_VECTOR_SECTIONS : 0);
}

static inline uint64_t format_header_size(uint64_t nParts, int vector)
{
    return FORMAT_FIXED_HEADER + FORMAT_ENTRY_SIZE * format_n_sections(nParts, vector);
}

#define FORMAT_FLAG_LABELS 1u
#define FORMAT_FLAG_RECORDS 2u
#define FORMAT_FLAG_VOCABULARY 4u
#define FORMAT_FLAG_FRONTEND 8u
#define FORMAT_FLAG_VECTOR 16u
#define FORMAT_ALL_FLAGS 31u

enum format_section {
    SEC_KEYWORDS = 1,
    SEC_LIST_OFFSETS,
    SEC_POSTINGS,
    SEC_SUBLISTS,
    SEC_KEYWORD_SUBLISTS,
    SEC_LABELS,
    SEC_RECORD_OFFSETS,
    SEC_RECORD_BYTES,
    SEC_WORD_OFFSETS,
    SEC_WORD_BYTES,
    SEC_WORD_ORDER,
    SEC_FRONTEND,
    SEC_PARTS,
    SEC_IVF_CENTROIDS,
    SEC_PQ_CODEBOOKS,
    SEC_PQ_CODES
};

/** Name of section @p id for messages ("POSTINGS"); "?" when unknown. */
const char *format_section_name(uint32_t id);

static inline uint64_t format_align(uint64_t x)
{
    return (x + FORMAT_ALIGN - 1) & ~(uint64_t)(FORMAT_ALIGN - 1);
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "genie index files are little-endian; big-endian hosts are not supported"
#endif

#endif
