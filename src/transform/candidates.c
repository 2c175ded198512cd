/* Candidate verification helpers: see candidates.h. */
#include "index/live.h"
#include "transform/candidates.h"

#include <assert.h>
#include <string.h>

#include "index/index.h"

void cand_record(const genie_index *idx, uint32_t o, const char **pz, size_t *pn)
{
    const index_live *l = idx->pLive;
    if (l && l->nAdded && o >= l->nBase) { /* an object a live index's log added */
        idx = l->pDelta;
        o -= (uint32_t)l->nBase;
    }
    *pz = idx->aRecordBytes + idx->aRecordOffset[o];
    *pn = (size_t)(idx->aRecordOffset[o + 1] - idx->aRecordOffset[o]);
}

void cand_topk_insert(void *aHit, uint32_t *pN, uint32_t k, size_t size, const void *pHit, cand_better_fn better)
{
    assert(k >= 1 && *pN <= k);
    unsigned char *a = aHit;
    uint32_t n = *pN;
    if (n == k) {
        if (!better(pHit, a + (size_t)(k - 1) * size))
            return;
        n--;
    }
    uint32_t i = n;
    while (i > 0 && better(pHit, a + (size_t)(i - 1) * size))
        i--;
    memmove(a + (size_t)(i + 1) * size, a + (size_t)i * size, (size_t)(n - i) * size);
    memcpy(a + (size_t)i * size, pHit, size);
    *pN = n + 1;
}
