/*
 * The genie index file, format version 2.
 *
 * One file holds one index: the inverted lists (the "List Array" of
 * seeds/003 III-B), the position map from keyword to list, the sublist
 * split used for load balance (III-B1), and optional per-object labels,
 * stored records a vocabulary and the
 * front-end's parameters.  Everything is little-endian and every
 * section starts on a 64-byte boundary, so the file can be memory-mapped
 * and its arrays used in place.
 *
 * Header (offsets in bytes):
 *
 *   off  size  field
 *     0     8  magic "GENIEIDX"
 *     8     4  format version (2)
 *    12     4  header size in bytes, section table included (472)
 *    16     8  file size in bytes
 *    24     8  n_objects        objects, ids 0..n_objects-1 (< 2^32)
 *    32     8  n_postings       total postings
 *    40     8  n_keywords       distinct keywords (each with >= 1 posting)
 *    48     8  n_sublists       lists after splitting at sublist_length
 *    56     8  n_words          vocabulary words (text indexes), else 0
 *    64     4  sublist_length   L of III-B1, >= 1
 *    68     4  max_object_length  most keywords in one object
 *    72     4  index type       0 keywords, 1 text, 2 sets, 3 sequences,
 *                                4 table, 5 vectors
 *    76     4  flags            bit 0 labels, bit 1 records, bit 2 vocabulary,
 *                                bit 3 front-end parameters
 *    80     4  n_sections       (12)
 *    84     4  header CRC32C    over bytes 0..header size, this field as 0
 *    88   384  section table: 12 entries of 32 bytes
 *
 * Section table entry:   +0 u32 id   +4 u32 0   +8 u64 offset   +16 u64 size
 *                        +24 u32 CRC32C of the section's bytes   +28 u32 0
 *
 * Sections, in this order, each at the first 64-byte boundary after the
 * previous one (the header for the first), zero bytes in between, the file
 * ending where the last one ends.  An absent optional section has size 0.
 *
 *   id  name             contents
 *    1  KEYWORDS         u32[n_keywords], strictly increasing
 *    2  LIST_OFFSETS     u64[n_keywords+1]: list j is postings[off[j], off[j+1])
 *    3  POSTINGS         u32[n_postings]: object ids, increasing within a list
 *    4  SUBLISTS         u64[n_sublists+1]: posting offset where each sublist
 *                        starts (every list cut into pieces of at most L)
 *    5  KEYWORD_SUBLISTS u64[n_keywords+1]: first sublist of each list
 *    6  LABELS           u64[n_objects] (flag bit 0)
 *    7  RECORD_OFFSETS   u64[n_objects+1] (flag bit 1)
 *    8  RECORD_BYTES     record i is bytes[off[i], off[i+1])
 *    9  WORD_OFFSETS     u64[n_words+1] (flag bit 2): word i stands for
 *                        keyword i
 *   10  WORD_BYTES       word i is bytes[off[i], off[i+1])
 *   11  WORD_ORDER       u32[n_words]: word ids in byte-wise order (lookup)
 *   12  FRONTEND         (flag bit 3) the parameters of the front-end that
 *                        made the keywords (hash seeds, n of the n-grams,
 *                        bin edges, ...): bytes the front-end of the index
 *                        type reads and validates; opaque to the index
 *
 * A query item [lo, hi] maps, by binary search in KEYWORDS, to a run of
 * lists that is one contiguous slice of POSTINGS, and to one contiguous run
 * of sublists.
 */
#ifndef GENIE_INDEX_FORMAT_H
#define GENIE_INDEX_FORMAT_H

#include <stdint.h>

#define FORMAT_MAGIC "GENIEIDX"
#define FORMAT_VERSION 2u
#define FORMAT_N_SECTIONS 12u
#define FORMAT_FIXED_HEADER 88u
#define FORMAT_ENTRY_SIZE 32u
#define FORMAT_HEADER_SIZE (FORMAT_FIXED_HEADER + FORMAT_N_SECTIONS * FORMAT_ENTRY_SIZE)
#define FORMAT_ALIGN 64u

#define FORMAT_FLAG_LABELS 1u
#define FORMAT_FLAG_RECORDS 2u
#define FORMAT_FLAG_VOCABULARY 4u
#define FORMAT_FLAG_FRONTEND 8u
#define FORMAT_ALL_FLAGS 15u

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
    SEC_FRONTEND
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
