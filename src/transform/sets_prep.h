/*
 * The queries of an exact set search (sets_exact.c) made ready for the
 * engine (engine/sim.h), on the CPU threads.  Private to src/transform.
 */
#ifndef GENIE_TRANSFORM_SETS_PREP_H
#define GENIE_TRANSFORM_SETS_PREP_H

#include "engine/sim.h"
#include "index/index.h"
#include "transform/sets.h"

/* Queries aSel[0 .. nSel) of azQuery / aLen (aSel NULL: iFirst + 0 .. nSel), and where they go. */
typedef struct sets_prep {
    const genie_index *idx;
    const set_params *p;
    const uint32_t *aElemPostings; /* each element's postings in every view: its order */
    const char *const *azQuery;
    const size_t *aLen;
    const uint32_t *aSel;
    size_t iFirst;
    size_t nSel;
    uint32_t *aQSize;  /* nSel: each query's size (distinct elements, unknown ones included) */
    sim_query *aQuery; /* nSel */
} sets_prep;

/**
 * Parse the queries of @p job as the index's sets are parsed, look their
 * elements up in the vocabulary (unknown ones still count in the size),
 * keep each known element once, fewest postings first, on @p nThread
 * threads: each query's size into job->aQSize, its sim_query into
 * job->aQuery and the elements of all of them into *paElem (allocated
 * here, freed by the caller; NULL on failure).
 * @return GENIE_OK, GENIE_EINVAL (a query of more than SIM_MAX_SIZE
 *         elements, named by its number in azQuery), GENIE_ENOMEM.
 */
genie_status sets_prep_run(const sets_prep *job, unsigned nThread, uint32_t **paElem);

#endif
