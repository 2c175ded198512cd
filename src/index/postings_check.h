/*
 * Validation of one part's postings when an index is opened, on several
 * threads (postings_check.c); private to index/.
 */
#ifndef GENIE_INDEX_POSTINGS_CHECK_H
#define GENIE_INDEX_POSTINGS_CHECK_H

#include <stdint.h>

typedef enum postings_verdict {
    POSTINGS_OK = 0,
    POSTINGS_BAD_ORDER = 1, /* an id out of range or not increasing in its list */
    POSTINGS_NO_MEMORY = 2
} postings_verdict;

/**
 * Check that every list j of nKeywords (postings aPosting[aListOffset[j]
 * .. aListOffset[j+1]), offsets already checked to increase) holds ids
 * below @p nObjects in strictly increasing order; report the longest list
 * (*pLongest) and the most postings of one object (*pMaxLen).
 */
postings_verdict postings_check(const uint64_t *aListOffset, const uint32_t *aPosting, uint64_t nKeywords,
                                uint64_t nObjects, uint64_t *pLongest, uint32_t *pMaxLen);

#endif
