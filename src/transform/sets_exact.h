/*
 * The exact search of a sets index through its element lists (engine/sim.h
 * on the CPU or the GPU), for sets_search.c.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_SETS_EXACT_H
#define GENIE_TRANSFORM_SETS_EXACT_H

#include "engine/sim.h"
#include "genie/sets.h"
#include "transform/sets.h"

/* The answers of a selection of queries, query j's at aHit[aEnd[j - 1] .. aEnd[j]), best first. */
typedef struct set_exact_out {
    uint64_t *aEnd;
    genie_set_hit *aHit;
    uint32_t *aQSize;      /* query j's size (distinct elements) */
    sim_work work;
    genie_backend backend; /* where the engine ran */
    double prepareSeconds; /* parsing, element lookups, planning */
    double matchSeconds;   /* the engine */
} set_exact_out;

/**
 * Exact answers of the queries aSel[0 .. nSel) of @p azQuery / @p aLen
 * (aSel NULL: the first nSel) on parts [firstPart, firstPart + nParts) of
 * the version-2 sets index @p idx with parameters @p p (the others left
 * out as if absent; global ids): under @p measure, the best @p k (0: all)
 * of those whose similarity reaches @p minValue (0: any above 0).  On the GPU when
 * @p opt's backend (auto included) has the exact similarity search, else
 * on the CPU threads.  The first call on an index derives and checks the
 * set sizes from its lists (kept until it is closed).
 * @return GENIE_OK, GENIE_EINVAL (a query of more than SIM_MAX_SIZE
 *         elements), GENIE_ECORRUPT (element lists that contradict
 *         themselves), the backend's errors, GENIE_ENOMEM.
 */
genie_status set_exact_search(const genie_index *idx, const set_params *p, uint32_t firstPart, uint32_t nParts,
                              const char *const *azQuery, const size_t *aLen, const uint32_t *aSel, size_t nSel,
                              uint32_t measure, uint32_t k, double minValue, const genie_search_options *opt,
                              set_exact_out *out);
void set_exact_out_free(set_exact_out *o);
/** The mean size of the sets of @p idx (derived as set_exact_search derives it). */
genie_status set_exact_mean_size(const genie_index *idx, const set_params *p, double *pMean);

#endif
