/*
 * The open-time postings check (src/index/postings_check.c) on both of its
 * paths, against a brute force over the same arrays: on good lists it must
 * accept and report the longest list and the most postings of one object;
 * after any corruption that leaves a list not strictly increasing or with
 * an id at or past n_objects (a swap, a duplicate, an id moved across the
 * boundary of two threads' ranges or of two blocks, an id out of range) it
 * must refuse.  Shapes: few long lists over enough objects for several
 * blocks and ranges (the blocked path), and many short lists (by lists).
 */
#include "test.h"
#include "index/postings_check.h"

typedef struct lists {
    uint64_t nKeywords, nObjects;
    uint64_t *aOffset;
    uint32_t *aPosting;
} lists;

/* Keyword j holds each object with probability about 1 / (1 + j % 7); object 7 is in every list. */
static void make_lists(lists *L, uint64_t nKeywords, uint64_t nObjects, uint64_t seed)
{
    uint64_t s = seed, cap = 0;
    L->nKeywords = nKeywords;
    L->nObjects = nObjects;
    L->aOffset = malloc((nKeywords + 1) * sizeof *L->aOffset);
    L->aPosting = NULL;
    CHECK(L->aOffset != NULL);
    uint64_t n = 0;
    L->aOffset[0] = 0;
    for (uint64_t j = 0; j < nKeywords; j++) {
        for (uint64_t o = 0; o < nObjects; o++) {
            if (o != 7 && test_rand(&s) % (1 + j % 7) != 0)
                continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 1024;
                L->aPosting = realloc(L->aPosting, cap * sizeof *L->aPosting);
                CHECK(L->aPosting != NULL);
            }
            L->aPosting[n++] = (uint32_t)o;
        }
        L->aOffset[j + 1] = n;
    }
}

/* The brute force: longest list and most postings of one object (lists known good). */
static void brute(const lists *L, uint64_t *pLongest, uint32_t *pMaxLen)
{
    uint32_t *aLen = calloc(L->nObjects, sizeof *aLen);
    CHECK(aLen != NULL);
    *pLongest = 0;
    *pMaxLen = 0;
    for (uint64_t j = 0; j < L->nKeywords; j++) {
        uint64_t len = L->aOffset[j + 1] - L->aOffset[j];
        *pLongest = len > *pLongest ? len : *pLongest;
        for (uint64_t i = L->aOffset[j]; i < L->aOffset[j + 1]; i++)
            if (++aLen[L->aPosting[i]] > *pMaxLen)
                *pMaxLen = aLen[L->aPosting[i]];
    }
    free(aLen);
}

static postings_verdict run_check(const lists *L, uint64_t *pLongest, uint32_t *pMaxLen)
{
    return postings_check(L->aOffset, L->aPosting, L->nKeywords, L->nObjects, pLongest, pMaxLen);
}

/* Position in list j of the first id at least x (the lists being good). */
static uint64_t find(const lists *L, uint64_t j, uint32_t x)
{
    uint64_t i = L->aOffset[j];
    while (i < L->aOffset[j + 1] && L->aPosting[i] < x)
        i++;
    return i;
}

static void check_shape(uint64_t nKeywords, uint64_t nObjects, uint64_t seed)
{
    lists L;
    make_lists(&L, nKeywords, nObjects, seed);
    uint64_t longest, wantLongest;
    uint32_t maxLen, wantMaxLen;
    brute(&L, &wantLongest, &wantMaxLen);
    CHECK_EQ(run_check(&L, &longest, &maxLen), POSTINGS_OK);
    CHECK_EQ(longest, wantLongest);
    CHECK_EQ(maxLen, wantMaxLen);
    CHECK_EQ(maxLen, (uint32_t)nKeywords); /* object 7 */

    /* Corruptions, each undone before the next. */
    uint64_t s = seed ^ 0x5eed;
    uint32_t aBoundary[] = {1, 8192, 16384, 65536, 131072, (uint32_t)nObjects / 2, (uint32_t)nObjects - 1};
    for (int c = 0; c < 60; c++) {
        uint64_t j = test_rand(&s) % nKeywords, b = L.aOffset[j], e = L.aOffset[j + 1];
        if (e - b < 4)
            continue;
        uint64_t i;
        if (c % 3 == 2) { /* near a block or range boundary */
            uint32_t x = aBoundary[test_rand(&s) % (sizeof aBoundary / sizeof *aBoundary)];
            i = find(&L, j, x < nObjects ? x : (uint32_t)nObjects - 1);
            i = i > b ? i - 1 : i;
            i = i + 1 < e ? i : e - 2;
        } else {
            i = b + test_rand(&s) % (e - b - 1);
        }
        uint64_t k = i + 1 + (c % 2 ? test_rand(&s) % (e - i - 1) : 0); /* a neighbour or far */
        uint32_t x = L.aPosting[i], y = L.aPosting[k];
        switch (c % 4) {
        case 0: /* swap: out of order */
            L.aPosting[i] = y, L.aPosting[k] = x;
            break;
        case 1: /* duplicate */
            L.aPosting[k] = x;
            break;
        case 2: /* an id past the end */
            L.aPosting[k] = (uint32_t)nObjects + (uint32_t)(test_rand(&s) % 3);
            break;
        default: /* the larger id moved before the smaller */
            L.aPosting[i] = y;
            break;
        }
        CHECK_EQ(run_check(&L, &longest, &maxLen), POSTINGS_BAD_ORDER);
        L.aPosting[i] = x;
        L.aPosting[k] = y;
    }
    CHECK_EQ(run_check(&L, &longest, &maxLen), POSTINGS_OK);
    free(L.aOffset);
    free(L.aPosting);
}

TEST(postings_check_blocked_and_by_lists)
{
    check_shape(24, 300007, 1);  /* 24 long lists, 19 blocks: the blocked path */
    check_shape(24, 262144, 2);  /* blocks and ranges end exactly at n_objects */
    check_shape(400000, 8, 3);   /* many short lists: by lists, and an object in 400,000 of them (32-bit recount) */
}
