/*
 * A search cancelled by its caller (engine.h, engine_cancelled): the one
 * error every step that polls the flag returns, in a file of its own so
 * that the backends and the parts, which engine.c calls, call no file that
 * calls them.
 */
#include "engine/engine.h"
#include "util/error.h"

genie_status engine_cancelled_error(void)
{
    return util_error(GENIE_ECANCELED, ENGINE_CANCELLED_MESSAGE);
}
