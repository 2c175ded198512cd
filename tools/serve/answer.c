/*
 * A done request's answer: its slice of the batch's results, written with
 * the same JSON writer as `genie search --json` (json_out.h), one object
 * per query, numbered from 1 within the request.
 */
#include <stdlib.h>

#include "serve.h"

void serve_result_release(serve_result *res)
{
    if (!res || atomic_fetch_sub(&res->nRef, 1) != 1)
        return;
    genie_results_free(res->pRes);
    genie_set_results_free(res->pSet);
    genie_seq_results_free(res->pSeq);
    genie_docs_results_free(res->pDocs);
    free(res->aNb);
    free(res->aN);
    free(res->aHit);
    free(res->aSeqHit);
    free(res->aCertified);
    free(res->aUsedK);
    free(res);
}

void serve_request_answer(const serve_request *r, json_buf *b)
{
    const serve_result *res = r->pResult;
    const genie_index *idx = r->pLoaded->idx;
    json_buf_puts(b, "{\"results\":[");
    for (size_t i = 0; i < r->nQuery; i++) {
        size_t q = r->iFirst + i, n;
        if (i)
            json_buf_put(b, ",", 1);
        switch (res->type) {
        case GENIE_TYPE_SETS: {
            const genie_set_hit *a = genie_set_results_get(res->pSet, q, &n);
            json_out_set_hits(b, idx, i + 1, a, n, "jaccard", r->opt.show);
            break;
        }
        case GENIE_TYPE_SEQUENCES: {
            int cert;
            uint32_t usedK;
            const genie_seq_hit *a;
            int scanned;
            if (res->aSeqHit) { /* through the search hook (genie-mpi serve): no scanned flag */
                a = res->aSeqHit + q * res->k;
                n = res->aN[q];
                cert = res->aCertified[q];
                usedK = res->aUsedK[q];
                scanned = r->opt.exact ? 1 : -1;
            } else {
                a = genie_seq_results_get(res->pSeq, q, &n, &cert, &usedK);
                scanned = genie_seq_results_scanned(res->pSeq, q);
            }
            json_out_seq_hits(b, idx, i + 1, a, n, cert, scanned, usedK, r->opt.show);
            break;
        }
        case GENIE_TYPE_DOCS: {
            const genie_docs_hit *a = genie_docs_results_get(res->pDocs, q, &n);
            json_out_docs_hits(b, idx, i + 1, a, n, r->opt.show);
            break;
        }
        case GENIE_TYPE_VECTORS:
            json_out_vec_hits(b, i + 1, res->aNb + q * res->k, res->aN[q]);
            break;
        default: {
            const genie_hit *a = res->aHit ? res->aHit + q * res->k : genie_results_get(res->pRes, q, &n);
            if (res->aHit)
                n = res->aN[q];
            json_out_hits(b, idx, i + 1, a, n, r->opt.show);
            break;
        }
        }
    }
    json_buf_puts(b, "]}");
}
