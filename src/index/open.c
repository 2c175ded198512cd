/*
 * Opening and closing an index with its log (the public genie_index_open,
 * genie_index_open_copy and genie_index_close): the file in memory
 * (index.c) and, when it has a write-ahead log, the log replayed
 * (live.c).  Apart from index.c so that the file's code and the log's
 * call each other in no circle: the log's delta is a file in memory too.
 */
#include "genie/genie.h"

#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "index/live.h"
#include "util/error.h"

/* Attempts at opening a file and its log consistently while a compaction may replace both. */
#define OPEN_TRIES 8

/* Open @p path through @p xLoad (mapped, or copied into memory), with its log (index/live.h). */
static genie_status index_open_with(const char *path, genie_status (*xLoad)(const char *, util_mapping *),
                                    genie_index **out)
{
    util_error_clear();
    *out = NULL;
    if (!path)
        return util_error(GENIE_EINVAL, "no index path given");
    genie_status rc = GENIE_OK;
    for (int t = 0; t < OPEN_TRIES; t++) {
        util_mapping m;
        GENIE_TRY(xLoad(path, &m));
        genie_index *idx;
        rc = index_open_mapping(path, path, &m, 0, &idx);
        util_unmap_file(&m); /* no-op when adopted */
        if (rc != GENIE_OK)
            return rc;
        int stale = 0;
        rc = live_open(idx, &stale);
        if (rc == GENIE_OK) {
            *out = idx;
            return GENIE_OK;
        }
        genie_index_close(idx);
        if (!stale)
            return rc;
        /* The file and its log disagree: a compaction renamed one between the two reads; again. */
    }
    return rc;
}

genie_status genie_index_open(const char *path, genie_index **out)
{
    return index_open_with(path, util_map_file, out);
}

genie_status genie_index_open_copy(const char *path, genie_index **out)
{
    return index_open_with(path, util_copy_file, out);
}

void genie_index_close(genie_index *idx)
{
    if (!idx)
        return;
    live_free(idx->pLive);
    index_close_file(idx);
}

genie_status genie_index_refresh(const genie_index *idx, genie_index **out)
{
    util_error_clear();
    *out = NULL;
    if (!idx->zPath)
        return util_error(GENIE_EINVAL, "the index was not opened from a file: nothing to refresh");
    genie_index *s;
    GENIE_TRY(index_share(idx, &s));
    int stale = 0;
    genie_status rc = live_refresh(s, idx->pLive, &stale);
    if (rc != GENIE_OK) {
        genie_index_close(s); /* zPath with it */
        if (stale)
            rc = util_error(GENIE_EFORMAT,
                            "%s was replaced since it was opened (a compaction, a rebuild): open it again",
                            idx->zPath);
        return rc;
    }
    *out = s;
    return GENIE_OK;
}
