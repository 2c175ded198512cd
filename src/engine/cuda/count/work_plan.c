/* Work units of a query: see work_plan.h. */
#include "engine/cuda/count/work_plan.h"

#include <stdlib.h>

#include "index/index.h"
#include "util/error.h"

/* Most buckets of a lookup table (16 M entries, 64 MiB). */
#define PLAN_MAX_BUCKET_LOG2 24u

genie_status plan_keywords_build(const genie_index *idx, plan_keywords *pKw)
{
    uint64_t n = idx->info.n_keywords;
    pKw->aKeyword = idx->aKeyword;
    pKw->nKeyword = n;
    pKw->aBucket = NULL;
    pKw->nBucket = 0;
    pKw->kwMin = 0;
    pKw->shift = 0;
    if (n == 0)
        return GENIE_OK;
    unsigned log2 = 0;
    while (log2 < PLAN_MAX_BUCKET_LOG2 && (1ull << log2) < n)
        log2++;
    uint64_t span = (uint64_t)idx->aKeyword[n - 1] - idx->aKeyword[0];
    unsigned shift = 0;
    while ((span >> shift) >= (1ull << log2))
        shift++;
    uint64_t nBucket = (span >> shift) + 1;
    uint32_t *aBucket = malloc((nBucket + 1) * sizeof *aBucket);
    if (!aBucket)
        return util_error(GENIE_ENOMEM, "out of memory for a keyword table of %llu buckets",
                          (unsigned long long)nBucket);
    uint32_t kwMin = idx->aKeyword[0];
    uint64_t i = 0;
    for (uint64_t b = 0; b < nBucket; b++) {
        while (i < n && (((uint64_t)idx->aKeyword[i] - kwMin) >> shift) < b)
            i++;
        aBucket[b] = (uint32_t)i;
    }
    aBucket[nBucket] = (uint32_t)n;
    pKw->aBucket = aBucket;
    pKw->nBucket = nBucket;
    pKw->kwMin = kwMin;
    pKw->shift = shift;
    return GENIE_OK;
}

void plan_keywords_free(plan_keywords *pKw)
{
    if (!pKw)
        return;
    free(pKw->aBucket);
    pKw->aBucket = NULL;
}

/* First keyword index whose keyword is >= key (nKeyword when none). */
static size_t plan_lower_bound(const plan_keywords *pKw, uint64_t key)
{
    if (pKw->nKeyword == 0 || key <= pKw->kwMin)
        return 0;
    uint64_t b = (key - pKw->kwMin) >> pKw->shift;
    if (b >= pKw->nBucket)
        return (size_t)pKw->nKeyword;
    /* Keywords of buckets before b are < key; those of later buckets are > key. */
    size_t lo = pKw->aBucket[b], hi = pKw->aBucket[b + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pKw->aKeyword[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void plan_keyword_range(const plan_keywords *pKw, uint32_t lo, uint32_t hi, size_t *pFirst, size_t *pEnd)
{
    size_t first = plan_lower_bound(pKw, lo);
    *pFirst = first;
    if (lo == hi) /* keywords are strictly increasing: the list of lo, or none */
        *pEnd = first + (first < pKw->nKeyword && pKw->aKeyword[first] == lo);
    else
        *pEnd = plan_lower_bound(pKw, (uint64_t)hi + 1);
}

static size_t emit(cuda_unit *aUnit, size_t n, uint64_t iBegin, uint64_t iEnd, uint32_t uTag)
{
    if (aUnit) {
        aUnit[n].iBegin = iBegin;
        aUnit[n].nPosting = (uint32_t)(iEnd - iBegin);
        aUnit[n].uQueryWeight = uTag;
    }
    return n + 1;
}

size_t plan_query_units(const genie_index *idx, const plan_keywords *pKw, const genie_queries *q, size_t iQuery,
                        plan_mode mode, uint32_t iLocal, cuda_unit *aUnit, uint64_t *pnPosting)
{
    size_t nItem, nUnit = 0;
    uint64_t nPosting = 0;
    const genie_item *aItem = engine_query_items(q, iQuery, &nItem);
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
        if (pKw)
            plan_keyword_range(pKw, aItem[j].lo, aItem[j].hi, &first, &end);
        else
            index_keyword_range(idx, aItem[j].lo, aItem[j].hi, &first, &end);
        uint64_t iBegin = idx->aListOffset[first], iEnd = idx->aListOffset[end];
        if (iBegin == iEnd)
            continue;
        nPosting += iEnd - iBegin;
        uint32_t uTag = iLocal << 8 | aItem[j].weight;
        if (mode == PLAN_LISTS) {
            for (size_t l = first; l < end; l++)
                if (idx->aListOffset[l + 1] > idx->aListOffset[l])
                    nUnit = emit(aUnit, nUnit, l, l + idx->aListOffset[l + 1] - idx->aListOffset[l], uTag);
        } else if (mode == PLAN_SUBLISTS) {
            /* Sublists never straddle lists, and an item's sublists are consecutive. */
            uint64_t s = idx->aKeywordSublist[first], sEnd = idx->aKeywordSublist[end];
            for (; s < sEnd; s += 2) {
                uint64_t sNext = s + 2 < sEnd ? s + 2 : sEnd;
                nUnit = emit(aUnit, nUnit, idx->aSublistStart[s], idx->aSublistStart[sNext], uTag);
            }
        } else {
            for (uint64_t b = iBegin; b < iEnd; b += PLAN_MAX_UNIT_POSTINGS) {
                uint64_t e = iEnd - b > PLAN_MAX_UNIT_POSTINGS ? b + PLAN_MAX_UNIT_POSTINGS : iEnd;
                nUnit = emit(aUnit, nUnit, b, e, uTag);
            }
        }
    }
    if (pnPosting)
        *pnPosting = nPosting;
    return nUnit;
}
