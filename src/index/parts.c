/*
 * Index parts (format.h, Zhou et al. (GENIE) III-D): the public description of the
 * parts and their residency in host memory.
 *
 * A part's list sections lie back to back in the file, so a part is one
 * byte range of the mapping (view->pSpan, nSpan).  Searching part by part,
 * the engine asks for a part's pages before using it (MADV_WILLNEED, a
 * read-ahead) and drops them after (MADV_DONTNEED).  The mapping is
 * read-only and private, so dropping loses nothing: a later access faults
 * the pages in again from the page cache or the file.  An index read into
 * memory (genie_index_open_copy) gets no advice: its pages are its own.  Resident memory
 * then stays near one part however large the index, which is what lets a
 * host with less RAM than the index answer (the kernel could evict clean
 * pages by itself under pressure, but only after squeezing everything
 * else; dropping them eagerly keeps the process's footprint honest).
 */
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "index/index.h"
#include "util/error.h"

static void advise(const genie_index *view, int advice)
{
    /* A copy (genie_index_open_copy) is anonymous memory: MADV_DONTNEED would zero it, not drop it. */
    if (!view->pSpan || view->nSpan == 0 || view->map.copied)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t b = (uintptr_t)view->pSpan & ~(page - 1);
    uintptr_t e = ((uintptr_t)view->pSpan + (uintptr_t)view->nSpan + page - 1) & ~(page - 1);
    /* Advice only: a failure leaves the pages where they are, answers unchanged. */
    (void)madvise((void *)b, e - b, advice);
}

void index_part_load(const genie_index *view)
{
    advise(view, MADV_WILLNEED);
}

void index_part_release(const genie_index *view)
{
    advise(view, MADV_DONTNEED);
}

void index_free_parts(genie_index *idx)
{
    if (!idx->aPart || idx->aPart == idx)
        return;
    for (uint32_t i = 0; i < idx->nPart; i++) {
        index_devices_free(idx->aPart[i].aDev);
        free(idx->aPart[i].aKeywordRank);
    }
    free(idx->aPart);
    idx->aPart = NULL;
    idx->nPart = 0;
}

uint32_t genie_index_parts(const genie_index *idx)
{
    return idx->nPart;
}

genie_status genie_index_part_info(const genie_index *idx, uint32_t part, genie_part_info *out)
{
    if (part >= idx->nPart)
        return util_error(GENIE_EINVAL, "part %u does not exist (the index has %u)", part, idx->nPart);
    const genie_index *v = &idx->aPart[part];
    out->first_object = v->firstObject;
    out->n_objects = v->info.n_objects;
    out->n_postings = v->info.n_postings;
    out->n_keywords = v->info.n_keywords;
    out->n_sublists = v->info.n_sublists;
    out->max_object_length = v->info.max_object_length;
    out->longest_list = v->info.longest_list;
    out->offset = (uint64_t)(v->pSpan - idx->map.p);
    out->bytes = v->nSpan;
    return GENIE_OK;
}
