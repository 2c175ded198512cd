/*
 * The named indexes of genie serve (serve.h).  A name points at the
 * serve_loaded that is current; a reload opens the file again and swaps
 * the pointer under the slot's mutex; so does a write's refresh
 * (writes.c), with a snapshot of the same file and its log.  Requests take a reference when they
 * arrive and batches keep it while they run, so a request in flight is
 * answered on the file it started with, and the old file is closed when
 * its last request is done.
 *
 * Every file genie serve searches is read whole into its memory when it
 * is opened (genie_index_open_copy), not mapped: a file rewritten in place under a
 * mapping (cp over it) would change the bytes of a validated index, and
 * a file truncated under it would raise SIGBUS and take every index down
 * with the process.  A copy changes only when a reload reads the file
 * again, validating it first.  (genie-mpi serve's broker maps its file:
 * it reads the metadata and the records alone, its rankers hold the
 * postings, and a copy would cost the whole file's size.)  Reloads of one index take turns
 * (reloadMu), so the one that answers last opened the newest file, and
 * each that succeeds adds one to the generation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int serve_name_ok(const char *zName)
{
    size_t n = strlen(zName);
    if (n == 0 || n > 100 || strcmp(zName, ".") == 0 || strcmp(zName, "..") == 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = zName[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/*
 * Open @p zPath (read into memory of its own when @p copy), or a snapshot
 * of @p pFrom's file with its log as it is now (genie_index_refresh), with
 * what the index's type needs at query time (its entry's xOpen).
 */
static genie_status loaded_open(const char *zPath, int copy, const serve_loaded *pFrom, serve_loaded **out)
{
    *out = NULL;
    serve_loaded *l = calloc(1, sizeof *l);
    if (!l)
        return GENIE_ENOMEM;
    genie_status rc = pFrom ? genie_index_refresh(pFrom->idx, &l->idx)
                      : copy ? genie_index_open_copy(zPath, &l->idx)
                             : genie_index_open(zPath, &l->idx);
    if (rc == GENIE_OK)
        rc = itype_attach(&l->ix, l->idx);
    if (rc != GENIE_OK) {
        genie_index_close(l->idx);
        free(l);
        return rc;
    }
    l->info = l->ix.info;
    atomic_init(&l->nRef, 1);
    *out = l;
    return GENIE_OK;
}

void serve_loaded_release(serve_loaded *l)
{
    if (!l || atomic_fetch_sub(&l->nRef, 1) != 1)
        return;
    itype_detach(&l->ix);
    genie_index_close(l->idx);
    free(l);
}

genie_status serve_index_open(serve_index *p, const char *zName, const char *zPath, int copy)
{
    memset(p, 0, sizeof *p);
    p->copy = copy;
    p->zName = strdup(zName);
    p->zPath = strdup(zPath);
    if (!p->zName || !p->zPath) {
        free(p->zName);
        free(p->zPath);
        return GENIE_ENOMEM;
    }
    genie_status rc = loaded_open(zPath, copy, NULL, &p->pCur);
    if (rc != GENIE_OK) {
        free(p->zName);
        free(p->zPath);
        return rc;
    }
    p->pCur->generation = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->reloadMu, NULL);
    return GENIE_OK;
}

void serve_index_close(serve_index *p)
{
    serve_loaded_release(p->pCur);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->reloadMu);
    free(p->zName);
    free(p->zPath);
    memset(p, 0, sizeof *p);
}

serve_loaded *serve_index_acquire(serve_index *p)
{
    pthread_mutex_lock(&p->mu);
    serve_loaded *l = p->pCur;
    atomic_fetch_add(&l->nRef, 1);
    pthread_mutex_unlock(&p->mu);
    return l;
}

/* Make @p pNew current (reloadMu held); @p newFile: it is another file's, the generation counts it. */
static void swap_in(serve_index *p, serve_loaded *pNew, int newFile)
{
    pthread_mutex_lock(&p->mu);
    serve_loaded *pOld = p->pCur;
    pNew->generation = pOld->generation + (newFile ? 1 : 0);
    p->pCur = pNew;
    pthread_mutex_unlock(&p->mu);
    serve_loaded_release(pOld);
}

genie_status serve_index_reload(serve_index *p)
{
    /* Opening (reading and validating every checksum) happens outside the
     * slot's lock, so searches go on meanwhile; reloads take turns. */
    pthread_mutex_lock(&p->reloadMu);
    serve_loaded *pNew;
    genie_status rc = loaded_open(p->zPath, p->copy, NULL, &pNew);
    if (rc == GENIE_OK)
        swap_in(p, pNew, 1);
    pthread_mutex_unlock(&p->reloadMu);
    return rc;
}

genie_status serve_index_refresh(serve_index *p, uint64_t *pLogBytes, int *pReopened)
{
    pthread_mutex_lock(&p->reloadMu);
    serve_loaded *pCur = serve_index_acquire(p), *pNew;
    genie_status rc = loaded_open(p->zPath, p->copy, pCur, &pNew);
    serve_loaded_release(pCur);
    int reopened = rc == GENIE_EFORMAT; /* the file was replaced (a compaction): read the new one */
    if (reopened)
        rc = loaded_open(p->zPath, p->copy, NULL, &pNew);
    if (rc == GENIE_OK) {
        genie_live_info li;
        genie_index_live_info(pNew->idx, &li);
        *pLogBytes = li.log_bytes - li.torn_bytes;
        *pReopened = reopened;
        swap_in(p, pNew, reopened);
    }
    pthread_mutex_unlock(&p->reloadMu);
    return rc;
}

void serve_index_info_json(serve_index *p, json_buf *b)
{
    serve_loaded *l = serve_index_acquire(p);
    const genie_index_info *i = &l->info;
    json_buf_puts(b, "{\"name\":");
    json_buf_string(b, p->zName, strlen(p->zName));
    json_buf_puts(b, ",\"file\":");
    json_buf_string(b, p->zPath, strlen(p->zPath));
    json_buf_printf(b,
                    ",\"generation\":%llu,\"format_version\":%u,\"file_size\":%llu,\"type\":\"%s\",\"objects\":%llu,"
                    "\"postings\":%llu,\"keywords\":%llu,\"longest_list\":%llu,\"max_object_length\":%u,"
                    "\"sublist_length\":%u,\"sublists\":%llu,\"vocabulary_words\":%llu,\"labels\":%s,"
                    "\"records\":%s",
                    (unsigned long long)l->generation, i->format_version, (unsigned long long)i->file_size,
                    genie_index_type_name(i->type), (unsigned long long)i->n_objects,
                    (unsigned long long)i->n_postings, (unsigned long long)i->n_keywords,
                    (unsigned long long)i->longest_list, i->max_object_length, i->sublist_length,
                    (unsigned long long)i->n_sublists, (unsigned long long)i->n_words,
                    i->has_labels ? "true" : "false", i->has_records ? "true" : "false");
    if (l->ix.pType->xInfoJson) /* the type's own: a dimension, columns */
        l->ix.pType->xInfoJson(&l->ix, b);
    genie_live_info li;
    genie_index_live_info(l->idx, &li);
    json_buf_printf(b,
                    ",\"writable\":%s,\"log\":{\"bytes\":%llu,\"objects_added\":%llu,\"objects_deleted\":%llu,"
                    "\"file_objects\":%llu}",
                    l->ix.pType->pWrites ? "true" : "false", (unsigned long long)li.log_bytes,
                    (unsigned long long)li.added, (unsigned long long)li.deleted, (unsigned long long)li.base_objects);
    uint32_t nParts = genie_index_parts(l->idx);
    json_buf_printf(b, ",\"parts\":[");
    for (uint32_t k = 0; k < nParts; k++) {
        genie_part_info pi;
        genie_index_part_info(l->idx, k, &pi);
        json_buf_printf(b, "%s{\"first_object\":%llu,\"objects\":%llu,\"postings\":%llu,\"keywords\":%llu,\"bytes\":%llu}",
                        k ? "," : "", (unsigned long long)pi.first_object, (unsigned long long)pi.n_objects,
                        (unsigned long long)pi.n_postings, (unsigned long long)pi.n_keywords,
                        (unsigned long long)pi.bytes);
    }
    json_buf_puts(b, "]}");
    serve_loaded_release(l);
}
