/* Work units of a query: see work_plan.h. */
#include "engine/cuda/work_plan.h"

#include "index/index.h"

static size_t emit(cuda_unit *aUnit, size_t n, uint64_t iBegin, uint64_t iEnd, uint32_t uTag)
{
    if (aUnit) {
        aUnit[n].iBegin = iBegin;
        aUnit[n].nPosting = (uint32_t)(iEnd - iBegin);
        aUnit[n].uQueryWeight = uTag;
    }
    return n + 1;
}

size_t plan_query_units(const genie_index *idx, const genie_queries *q, size_t iQuery, plan_mode mode,
                        uint32_t iLocal, cuda_unit *aUnit, uint64_t *pnPosting)
{
    size_t nItem, nUnit = 0;
    uint64_t nPosting = 0;
    const genie_item *aItem = engine_query_items(q, iQuery, &nItem);
    for (size_t j = 0; j < nItem; j++) {
        size_t first, end;
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
