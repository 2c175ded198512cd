/*
 * The bytes genie serve holds for requests (--max-queue-bytes, serve.h):
 * bodies as they arrive, their parsed JSON trees, and the arrays of the
 * parsed queries, from their arrival until the request is freed.
 *
 * Why bytes and not only queries (--max-queue): a body of 8 MB becomes a
 * cJSON tree tens of times larger (a node per number), so ten such
 * requests queued behind a slow one held gigabytes.  Every allocation of
 * cJSON goes through the hooks below, which count it against the one
 * budget and refuse it past the limit: the parse itself is bounded, and a
 * parse cut short says so (serve_mem_parse_failure) instead of "malformed
 * JSON".  Each freed block gives back what malloc_usable_size says it
 * held, so the count is exact however the tree is freed and by which
 * thread.  The answers a request gets are not counted: they are bounded
 * by --max-queries and --max-k, and freed once written.
 */
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "serve.h"

static atomic_ullong gHeld;     /* bytes held now */
static uint64_t gLimit;         /* 0: no limit (before serve_mem_init) */
static _Thread_local int tParseFailure; /* SERVE_MEM_* of this thread's last parse, 0 when none */

int serve_mem_take(size_t n)
{
    uint64_t held = atomic_fetch_add(&gHeld, n) + n;
    if (gLimit && held > gLimit) {
        atomic_fetch_sub(&gHeld, n);
        return -1;
    }
    return 0;
}

void serve_mem_give(size_t n)
{
    atomic_fetch_sub(&gHeld, n);
}

uint64_t serve_mem_held(void)
{
    return atomic_load(&gHeld);
}

uint64_t serve_mem_limit(void)
{
    return gLimit;
}

size_t serve_mem_block(const void *p)
{
    return p ? malloc_usable_size((void *)p) : 0;
}

static void *json_malloc(size_t n)
{
    if (serve_mem_take(n) != 0) {
        tParseFailure = SERVE_MEM_OVER_BUDGET;
        return NULL;
    }
    void *p = malloc(n);
    if (!p) {
        serve_mem_give(n);
        tParseFailure = SERVE_MEM_NO_MEMORY;
        return NULL;
    }
    size_t have = malloc_usable_size(p);
    atomic_fetch_add(&gHeld, have - n); /* what free gives back: never refused, it is already there */
    return p;
}

static void json_free(void *p)
{
    if (!p)
        return;
    serve_mem_give(malloc_usable_size(p));
    free(p);
}

void serve_mem_init(uint64_t limit)
{
    gLimit = limit;
    cJSON_Hooks hooks = {json_malloc, json_free};
    cJSON_InitHooks(&hooks);
}

void serve_mem_parse_begin(void)
{
    tParseFailure = 0;
}

int serve_mem_parse_failure(void)
{
    return tParseFailure;
}
