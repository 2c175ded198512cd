/*
 * The library's side of the CUDA module's test hooks
 * (engine/cuda/cuda_testing.h), in GENIE_TESTING builds alone
 * (libgenie_testing.a): each loads the module through the backend table,
 * then calls the testing module's hook; without a module they do nothing.
 */
#include "engine/backend.h"
#include "engine/cuda_module.h"
#include "util/error.h"

static const engine_cuda_testing *testing_table(void)
{
    const engine_backend *be = NULL;
    if (engine_backend_pick(GENIE_BACKEND_CUDA, &be) != GENIE_OK)
        util_error_clear();
    return engine_cuda_module_testing();
}

void cpq_testing_set_slots(uint64_t nSlot)
{
    const engine_cuda_testing *t = testing_table();
    if (t)
        t->xCpqSetSlots(nSlot);
}

void tile_testing_set_variant(int widePostings, int warpAggregate)
{
    const engine_cuda_testing *t = testing_table();
    if (t)
        t->xTileSetVariant(widePostings, warpAggregate);
}
