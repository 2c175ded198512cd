/*
 * The CUDA backend's entry points in a build without CUDA: every call says
 * so, and genie_search() falls back to the CPU backend under "auto".
 */
#include "engine/engine.h"
#include "engine/exact.h"
#include "util/error.h"

int engine_cuda_usable(void)
{
    return 0;
}

static genie_status not_built(void)
{
    return util_error(GENIE_ENOTSUP, "this genie was built without CUDA support");
}

genie_status engine_cuda_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    (void)req;
    (void)aHit;
    (void)aN;
    return not_built();
}

genie_status engine_cuda_spq_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    (void)req;
    (void)aHit;
    (void)aN;
    return not_built();
}

genie_status engine_cuda_cpq_paper_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    (void)req;
    (void)aHit;
    (void)aN;
    return not_built();
}

genie_status engine_cuda_stream_begin(const genie_index *idx, const genie_search_options *opt, engine_stream **ppS,
                                      int *pOverlap, uint64_t *pHeld)
{
    (void)idx;
    (void)opt;
    *ppS = NULL;
    *pOverlap = 0;
    *pHeld = 0;
    return not_built();
}

genie_status engine_cuda_stream_start(engine_stream *s, genie_index *view)
{
    (void)s;
    (void)view;
    return not_built();
}

genie_status engine_cuda_stream_ready(engine_stream *s, genie_index *view)
{
    (void)s;
    (void)view;
    return not_built();
}

genie_status engine_cuda_stream_done(engine_stream *s, genie_index *view, double *pUpload, double *pWait)
{
    (void)s;
    (void)view;
    *pUpload = *pWait = 0;
    return not_built();
}

void engine_cuda_stream_end(engine_stream *s)
{
    (void)s;
}

genie_status exact_cuda_search(void **ppResident, const float *base, uint64_t nBase, const float *queries,
                               uint64_t nQuery, uint32_t dim, genie_metric metric, uint32_t k, genie_neighbor *out)
{
    (void)ppResident;
    (void)base;
    (void)nBase;
    (void)queries;
    (void)nQuery;
    (void)dim;
    (void)metric;
    (void)k;
    (void)out;
    return not_built();
}

void exact_cuda_resident_free(void *pResident)
{
    (void)pResident;
}
