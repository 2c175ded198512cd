/*
 * The output of a keyword, text or table search, shared by `genie search`
 * (cmd_search.c) and `genie-mpi search` (tools/mpi), so that both print
 * exactly the same bytes for the same answers.
 *
 * TSV, one line per hit (queries and ranks count from 1):
 *   query_no <TAB> rank <TAB> object <TAB> label <TAB> count [<TAB> record]
 * JSON (--json), one object per query, written by json_out.c (the
 * writer of genie serve too):
 *   {"query":N,"hits":[{"rank":R,"object":O,"label":L|null,"count":C}...]}
 * with "record" in each hit under --show, and "partial":true after the
 * query number when some shards of a distributed search did not answer.
 */
#ifndef GENIE_TOOLS_SEARCH_OUTPUT_H
#define GENIE_TOOLS_SEARCH_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"
#include "json_out.h"

typedef struct search_output {
    json_out_source src; /* where labels and records come from */
    int json, show;
    json_buf jb;         /* search_output_init() */
} search_output;

void search_output_init(search_output *o);
void search_output_free(search_output *o);
/**
 * Print query @p queryNo's hits, best first; @p partial marks the JSON
 * object.  @return 0, or -1 when out of memory (printed).
 */
int search_output_query(search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n, int partial);
/** Print every query of @p r, numbered from @p firstQueryNo.  @return 0, or -1 (printed). */
int search_output_results(search_output *o, const genie_results *r, uint64_t firstQueryNo);

#endif
