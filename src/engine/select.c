/* A bounded min-heap for exact top-k (see select.h). */
#include "engine/select.h"

static void sift_down(uint64_t *a, size_t n, size_t i)
{
    uint64_t v = a[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && a[c + 1] < a[c])
            c++;
        if (a[c] >= v)
            break;
        a[i] = a[c];
        i = c;
    }
    a[i] = v;
}

void select_push(select_heap *h, uint64_t key)
{
    if (h->n < h->k) {
        size_t i = h->n++;
        while (i > 0) {
            size_t p = (i - 1) / 2;
            if (h->aKey[p] <= key)
                break;
            h->aKey[i] = h->aKey[p];
            i = p;
        }
        h->aKey[i] = key;
    } else if (key > h->aKey[0]) {
        h->aKey[0] = key;
        sift_down(h->aKey, h->n, 0);
    }
}

size_t select_finish(select_heap *h, genie_hit *aHit)
{
    size_t n = h->n;
    /* Heap-sort in place: the minimum goes to the back each round. */
    for (size_t m = n; m > 1; m--) {
        uint64_t t = h->aKey[0];
        h->aKey[0] = h->aKey[m - 1];
        h->aKey[m - 1] = t;
        sift_down(h->aKey, m - 1, 0);
    }
    for (size_t i = 0; i < n; i++) {
        aHit[i].count = (uint32_t)(h->aKey[i] >> 32);
        aHit[i].object = UINT32_MAX - (uint32_t)h->aKey[i];
    }
    h->n = 0;
    return n;
}
