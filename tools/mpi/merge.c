/* The broker's k-way merge of per-shard top-k lists (see merge.h). */
#include "merge.h"

#include <stdlib.h>

int merge_init(merge_heap *h, size_t nList)
{
    h->nCap = nList;
    h->aHeap = malloc((nList ? nList : 1) * sizeof *h->aHeap);
    h->aPos = malloc((nList ? nList : 1) * sizeof *h->aPos);
    if (!h->aHeap || !h->aPos) {
        merge_free(h);
        return -1;
    }
    return 0;
}

void merge_free(merge_heap *h)
{
    free(h->aHeap);
    free(h->aPos);
    h->aHeap = NULL;
    h->aPos = NULL;
    h->nCap = 0;
}

/* Is hit @p a better than @p b: a smaller key, or the same key and a smaller id. */
static int better(const wire_hit *a, const wire_hit *b)
{
    return a->key < b->key || (a->key == b->key && a->object < b->object);
}

/* The head of list @p i. */
#define HEAD(i) (&aList[i][h->aPos[i]])
/* The merge's order: the caller's, else the key's (inlined: the usual case). */
#define BEFORE(a, b) (xBefore ? xBefore(a, b, pCtx) : better(a, b))

static void sift_down(merge_heap *h, const wire_hit *const *aList, size_t n, size_t at, merge_before_fn xBefore,
                      const void *pCtx)
{
    uint32_t x = h->aHeap[at];
    for (;;) {
        size_t c = 2 * at + 1;
        if (c >= n)
            break;
        if (c + 1 < n && BEFORE(HEAD(h->aHeap[c + 1]), HEAD(h->aHeap[c])))
            c++;
        if (!BEFORE(HEAD(h->aHeap[c]), HEAD(x)))
            break;
        h->aHeap[at] = h->aHeap[c];
        at = c;
    }
    h->aHeap[at] = x;
}

size_t merge_topk(merge_heap *h, const wire_hit *const *aList, const uint32_t *aN, size_t nList, uint32_t k,
                  merge_before_fn xBefore, const void *pCtx, wire_hit *aOut)
{
    size_t n = 0, nOut = 0;
    for (size_t i = 0; i < nList && i < h->nCap; i++) {
        h->aPos[i] = 0;
        if (aN[i])
            h->aHeap[n++] = (uint32_t)i;
    }
    for (size_t at = n / 2; at-- > 0;)
        sift_down(h, aList, n, at, xBefore, pCtx);
    while (n > 0 && nOut < k) {
        uint32_t i = h->aHeap[0];
        aOut[nOut++] = *HEAD(i);
        if (++h->aPos[i] == aN[i])
            h->aHeap[0] = h->aHeap[--n];
        sift_down(h, aList, n, 0, xBefore, pCtx);
    }
    return nOut;
}
