/*
 * The output of a keyword or text search, shared by `genie search`
 * (cmd_search.c) and `genie-mpi search` (tools/mpi), so that both print
 * exactly the same bytes for the same answers.
 *
 * TSV, one line per hit (queries and ranks count from 1):
 *   query_no <TAB> rank <TAB> object <TAB> label <TAB> count [<TAB> record]
 * JSON (--json), one object per query:
 *   {"query":N,"hits":[{"rank":R,"object":O,"label":L|null,"count":C}...]}
 * with "record" in each hit under --show, and "partial":true after the
 * query number when some shards of a distributed search did not answer.
 */
#ifndef GENIE_TOOLS_SEARCH_OUTPUT_H
#define GENIE_TOOLS_SEARCH_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

typedef struct search_output {
    /* Labels and records of the objects of the hits come from idx, unless
     * xLocate is set: then it names the index holding object id @p object
     * and that object's id in it (genie-mpi with a shard map). */
    const genie_index *idx;
    const genie_index *(*xLocate)(void *ctx, uint32_t object, uint32_t *pLocal);
    void *pLocateCtx;
    int json, show, hasLabels, hasRecords;
} search_output;

/** Print query @p queryNo's hits, best first; @p partial marks the JSON object. */
void search_output_query(const search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n, int partial);
/** Print every query of @p r, numbered from @p firstQueryNo. */
void search_output_results(const search_output *o, const genie_results *r, uint64_t firstQueryNo);

#endif
