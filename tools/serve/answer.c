/*
 * A done request's answer: its slice of the batch's results, written with
 * the JSON printer of the index's entry in the type table, which `genie
 * search --json` prints with too, one object per query, numbered from 1
 * within the request.
 */
#include <stdlib.h>

#include "serve.h"

void serve_result_release(serve_result *res)
{
    if (!res || atomic_fetch_sub(&res->nRef, 1) != 1)
        return;
    if (res->pType)
        itype_results_free(res->pType, &res->r);
    free(res);
}

void serve_request_answer(const serve_request *r, json_buf *b)
{
    const serve_result *res = r->pResult;
    itype_printer p = {{r->pLoaded->idx, NULL, NULL}, r->opt.o.show, &r->opt.o};
    json_buf_puts(b, "{\"results\":[");
    for (size_t i = 0; i < r->nQuery; i++) {
        itype_answer a;
        itype_results_answer(res->pType, &res->r, r->iFirst + i, &a);
        if (i)
            json_buf_put(b, ",", 1);
        res->pType->xJson(b, &p, i + 1, &a);
    }
    json_buf_puts(b, "]}");
}
