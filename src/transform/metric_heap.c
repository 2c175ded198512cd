/*
 * The pieces of a List of Clusters search that its forms share (metric.h):
 * the order of hits by (distance, id), the k-NN heap and its radius, the
 * order in which clusters are visited, and where a cluster's members
 * begin.  The sequential search (metric_search.c), the batched one
 * (metric_batch.c) and the walks of the distributed search
 * (metric_walk.c) all use them.
 */
#include "transform/metric.h"

int lc_hit_less(const genie_lc_hit *a, const genie_lc_hit *b)
{
    return a->distance < b->distance || (a->distance == b->distance && a->object < b->object);
}

int lc_cmp_hit(const void *a, const void *b)
{
    return lc_hit_less(a, b) ? -1 : lc_hit_less(b, a) ? 1 : 0;
}

void lc_heap_push(lc_heap *h, genie_lc_hit x)
{
    genie_lc_hit *a = h->a;
    if (h->n < h->k) {
        size_t i = h->n++;
        while (i > 0 && lc_hit_less(&a[(i - 1) / 2], &x)) {
            a[i] = a[(i - 1) / 2];
            i = (i - 1) / 2;
        }
        a[i] = x;
        return;
    }
    if (!lc_hit_less(&x, &a[0]))
        return;
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, big = i;
        const genie_lc_hit *pBig = &x;
        if (l < h->n && lc_hit_less(pBig, &a[l])) {
            big = l;
            pBig = &a[l];
        }
        if (l + 1 < h->n && lc_hit_less(pBig, &a[l + 1]))
            big = l + 1;
        if (big == i)
            break;
        a[i] = a[big];
        i = big;
    }
    a[i] = x;
}

int lc_cmp_cand(const void *a, const void *b)
{
    const lc_cand *x = a, *y = b;
    if (x->lb != y->lb)
        return x->lb < y->lb ? -1 : 1;
    if (x->dc != y->dc)
        return x->dc < y->dc ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* The current k-NN radius: the k-th distance once the heap is full. */
double lc_knn_radius(const lc_heap *h, double r0)
{
    return h->n == h->k && h->a[0].distance < r0 ? h->a[0].distance : r0;
}

uint32_t lc_cluster_begin(const lc_layout *L, uint32_t i)
{
    return i ? L->aEnd[i - 1] : 0;
}
