/*
 * What the types answered by match count share (counts.c): keywords, text
 * and table searches are genie_search() of keyword items, their answers
 * genie_results, printed alike and searched in parts alike.  The entries of
 * tools/type_keywords.c and tools/type_table.c point at these.
 *
 * TSV, one line per hit (queries and ranks count from 1):
 *   query_no <TAB> rank <TAB> object <TAB> label <TAB> count [<TAB> record]
 * label is '-' when the index has none; the record comes with --show.
 * JSON: json_out_hits_from().
 */
#ifndef GENIE_TOOLS_COUNTS_H
#define GENIE_TOOLS_COUNTS_H

#include "itype.h"

/* The entries' members (itype.h says what each does). */
genie_status counts_search(const itype_index *ix, const itype_options *o, const genie_search_options *eng,
                           const itype_batch *q, itype_results *out);
void counts_answer(const itype_results *r, size_t q, itype_answer *a);
void counts_free(void *pNative);
void counts_tsv(const itype_printer *p, uint64_t queryNo, const itype_answer *a);
void counts_json(json_buf *b, const itype_printer *p, uint64_t queryNo, const itype_answer *a);
genie_status counts_search_parts(const itype_index *ix, uint32_t firstPart, uint32_t nParts, uint64_t base,
                                 const itype_options *o, const genie_search_options *eng, const itype_batch *q,
                                 itype_hits_fn xAdd, void *ctx);
void counts_from_hits(const itype_hit *aHit, size_t n, const itype_options *o, uint32_t word, void *aOut);

/* The members of every match-count type's entry: its hits, search, answers and printing. */
#define COUNTS_MEMBERS                                                                              \
    .szHit = sizeof(genie_hit), .xSearch = counts_search, .xAnswer = counts_answer, .xFree = counts_free, \
    .xTsv = counts_tsv, .xJson = counts_json

/* The search options of every match-count type: k, min_count and show. */
#define COUNTS_OPTIONS                                                 \
    ITYPE_OPTION("k", ITYPE_OPT_UINT, k, 1, GENIE_SEARCH_MAX_K),       \
        ITYPE_OPTION("min_count", ITYPE_OPT_UINT, minCount, 0, UINT32_MAX), \
        ITYPE_OPTION("show", ITYPE_OPT_BOOL, show, 0, 1)

#endif
