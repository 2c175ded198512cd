/*
 * genie-mpi metric: a processor's work (metric_mpi.h).  The records that
 * arrive start walks (SEARCH: LL, the whole search of this processor's
 * index; PLAN: LG, this processor's members of the plan's clusters) or,
 * at a query's ranker, start it (QUERY) and gather the processors'
 * answers (PART) until every list is in, then merge them by (distance,
 * id), the best k for k-NN, and send the answer to the broker.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metric_mpi.h"

int lcm_proc_rank(const lcm_rank *s, int p)
{
    return s->size > 1 ? p + 1 : 0;
}

int lcm_fail(lcm_rank *s, const char *zWhat, genie_status rc)
{
    const char *zWhy = rc == GENIE_OK ? "failed" : genie_last_error()[0] ? genie_last_error() : genie_strerror(rc);
    snprintf(s->zErr, sizeof s->zErr, "%s: %s", zWhat, zWhy);
    return -1;
}

static int grow(void *ppA, size_t *pCap, size_t n, size_t size)
{
    if (n < *pCap)
        return 0;
    size_t cap = *pCap ? 2 * *pCap : 16;
    void *a = realloc(*(void **)ppA, cap * size);
    if (!a)
        return -1;
    *(void **)ppA = a;
    *pCap = cap;
    return 0;
}

static int task_add(lcm_rank *s, genie_lc_walk *walk, uint32_t query, int owner, int centers,
                    const unsigned char *payload, uint32_t len)
{
    if (grow(&s->aTask, &s->nTaskCap, s->nTask, sizeof *s->aTask) != 0) {
        genie_lc_walk_free(walk);
        return lcm_fail(s, "out of memory for walks", GENIE_OK);
    }
    lcm_task *t = &s->aTask[s->nTask];
    memset(t, 0, sizeof *t);
    t->walk = walk;
    t->query = query;
    t->owner = owner;
    t->centers = centers;
    if (centers) {
        if (!(t->payload = malloc(len ? len : 1))) {
            genie_lc_walk_free(walk);
            return lcm_fail(s, "out of memory for a query", GENIE_OK);
        }
        memcpy(t->payload, payload, len);
        t->payloadLen = len;
    }
    s->nTask++;
    return 0;
}

static int walk_start(lcm_rank *s, const genie_lc_walker *w, genie_lc_walk_part part, const unsigned char *payload,
                      uint32_t len, genie_lc_walk **out)
{
    genie_lc_walk_options o = {.k = s->a->k, .radius = s->a->radius, .bounded = s->a->k && s->a->haveRadius,
                               .part = part};
    if (part == GENIE_LC_WALK_MEMBERS) {
        o.share_stride = (uint32_t)s->P;
        o.share_offset = (uint32_t)s->p;
    }
    float *v = NULL;
    genie_status rc;
    if (s->dim) {
        if (len != s->dim * sizeof(float))
            return lcm_fail(s, "a vector query of the wrong size arrived", GENIE_OK);
        if (!(v = malloc(len)))
            return lcm_fail(s, "out of memory for a query", GENIE_OK);
        memcpy(v, payload, len);
        rc = genie_lc_walk_start(w, &o, v, NULL, 0, out);
    } else {
        rc = genie_lc_walk_start(w, &o, NULL, (const char *)payload, len, out);
    }
    free(v);
    return rc == GENIE_OK ? 0 : lcm_fail(s, "starting a walk", rc);
}

/* SEARCH (LL) or PLAN (LG): this processor's part of a query. */
static int on_work(lcm_rank *s, int kind, lcm_rd *r)
{
    uint32_t query = lcm_u32(r), owner = lcm_u32(r), len = lcm_u32(r);
    const unsigned char *payload = lcm_bytes(r, len);
    if (r->bad || (int)owner >= s->size)
        return lcm_fail(s, "a malformed work record arrived", GENIE_OK);
    genie_lc_walk *walk;
    if (kind == LCM_SEARCH) {
        if (walk_start(s, s->walker, GENIE_LC_WALK_WHOLE, payload, len, &walk) != 0)
            return -1;
        return task_add(s, walk, query, (int)owner, 0, NULL, 0);
    }
    genie_lc_plan plan;
    plan.stop = lcm_u32(r);
    plan.radius = lcm_f64(r);
    plan.n = lcm_u32(r);
    uint32_t *aC = NULL;
    double *aD = NULL;
    if (!r->bad && plan.n <= (size_t)(r->end - r->p) / 12) {
        aC = malloc((plan.n ? plan.n : 1) * sizeof *aC);
        aD = malloc((plan.n ? plan.n : 1) * sizeof *aD);
    }
    if (!aC || !aD) {
        free(aC);
        free(aD);
        return lcm_fail(s, r->bad ? "a malformed plan arrived" : "out of memory for a plan", GENIE_OK);
    }
    for (uint32_t j = 0; j < plan.n; j++) {
        aC[j] = lcm_u32(r);
        aD[j] = lcm_f64(r);
    }
    plan.clusters = aC;
    plan.center_distances = aD;
    int st = walk_start(s, s->walker, GENIE_LC_WALK_MEMBERS, payload, len, &walk);
    if (st == 0) {
        genie_status rc = genie_lc_walk_set_plan(walk, &plan);
        if (rc != GENIE_OK) {
            genie_lc_walk_free(walk);
            st = lcm_fail(s, "a plan", rc);
        } else {
            st = task_add(s, walk, query, (int)owner, 0, NULL, 0);
        }
    }
    free(aC);
    free(aD);
    return st;
}

/* The ranker's merge: one more list of answers for a query it ranks. */
static int pend_find(lcm_rank *s, uint32_t query)
{
    for (size_t i = 0; i < s->nPend; i++)
        if (s->aPend[i].query == query)
            return (int)i;
    return -1;
}

static int cmp_hit(const void *a, const void *b)
{
    const genie_lc_hit *x = a, *y = b;
    if (x->distance != y->distance)
        return x->distance < y->distance ? -1 : 1;
    return (x->object > y->object) - (x->object < y->object);
}

static int pend_add(lcm_rank *s, uint32_t query, const genie_lc_hit *a, size_t n, uint64_t nDist, lcm_rd *r)
{
    int i = pend_find(s, query);
    if (i < 0)
        return lcm_fail(s, "answers arrived for a query this rank does not rank", GENIE_OK);
    lcm_pending *q = &s->aPend[i];
    while (q->nHit + n > q->nCap) {
        size_t cap = q->nCap ? 2 * q->nCap : 64;
        genie_lc_hit *b = realloc(q->aHit, cap * sizeof *b);
        if (!b)
            return lcm_fail(s, "out of memory for answers", GENIE_OK);
        q->aHit = b;
        q->nCap = cap;
    }
    for (size_t j = 0; j < n; j++) {
        if (a) {
            q->aHit[q->nHit++] = a[j];
        } else {
            uint32_t o = lcm_u32(r);
            double d = lcm_f64(r);
            q->aHit[q->nHit++] = (genie_lc_hit){o, d};
        }
    }
    q->nDist += nDist;
    if (--q->wait > 0)
        return 0;
    if (q->nHit > 1)
        qsort(q->aHit, q->nHit, sizeof *q->aHit, cmp_hit);
    uint32_t nOut = (uint32_t)(s->a->k && q->nHit > s->a->k ? s->a->k : q->nHit);
    lcm_buf *b = &s->net.aOut[0];
    lcm_put_u32(b, LCM_ANSWER);
    lcm_put_u32(b, query);
    lcm_put_u64(b, q->nDist);
    lcm_put_hits(b, q->aHit, nOut);
    s->nRanked++;
    free(q->aHit);
    *q = s->aPend[--s->nPend];
    return 0;
}

/* QUERY: this processor ranks it. */
static int on_query(lcm_rank *s, lcm_rd *r)
{
    uint32_t query = lcm_u32(r), len = lcm_u32(r);
    const unsigned char *payload = lcm_bytes(r, len);
    if (r->bad)
        return lcm_fail(s, "a malformed query record arrived", GENIE_OK);
    if (grow(&s->aPend, &s->nPendCap, s->nPend, sizeof *s->aPend) != 0)
        return lcm_fail(s, "out of memory for queries", GENIE_OK);
    s->aPend[s->nPend++] = (lcm_pending){query, s->P + (s->a->partition == PART_LG), 0, NULL, 0, 0};
    if (s->a->partition == PART_LG) {
        genie_lc_walk *walk;
        if (walk_start(s, s->walker, GENIE_LC_WALK_CENTERS, payload, len, &walk) != 0)
            return -1;
        return task_add(s, walk, query, s->rank, 1, payload, len);
    }
    for (int p = 0; p < s->P; p++) {
        lcm_buf *b = &s->net.aOut[lcm_proc_rank(s, p)];
        lcm_put_u32(b, LCM_SEARCH);
        lcm_put_u32(b, query);
        lcm_put_u32(b, (uint32_t)s->rank);
        lcm_put_u32(b, len);
        lcm_put(b, payload, len);
    }
    return 0;
}

/* A walk is over: its answers to the ranker (LG centers: the plan to all). */
static int task_done(lcm_rank *s, lcm_task *t)
{
    size_t n;
    const genie_lc_hit *a = genie_lc_walk_hits(t->walk, &n);
    uint64_t nDist = genie_lc_walk_distances(t->walk);
    if (t->centers) {
        genie_lc_plan plan;
        genie_status rc = genie_lc_walk_plan(t->walk, &plan);
        if (rc != GENIE_OK)
            return lcm_fail(s, "a plan", rc);
        s->nPlanned += plan.n;
        for (int p = 0; p < s->P; p++) {
            lcm_buf *b = &s->net.aOut[lcm_proc_rank(s, p)];
            lcm_put_u32(b, LCM_PLAN);
            lcm_put_u32(b, t->query);
            lcm_put_u32(b, (uint32_t)s->rank);
            lcm_put_u32(b, t->payloadLen);
            lcm_put(b, t->payload, t->payloadLen);
            lcm_put_u32(b, plan.stop);
            lcm_put_f64(b, plan.radius);
            lcm_put_u32(b, plan.n);
            for (uint32_t j = 0; j < plan.n; j++) {
                lcm_put_u32(b, plan.clusters[j]);
                lcm_put_f64(b, plan.center_distances[j]);
            }
        }
        return pend_add(s, t->query, a, n, nDist, NULL);
    }
    lcm_buf *b = &s->net.aOut[t->owner];
    lcm_put_u32(b, LCM_PART);
    lcm_put_u32(b, t->query);
    lcm_put_u64(b, nDist);
    lcm_put_u32(b, (uint32_t)n);
    /* LL: local object i is object p + i P of the index. */
    uint32_t stride = s->a->partition == PART_LL ? (uint32_t)s->P : 1, offset = stride > 1 ? (uint32_t)s->p : 0;
    for (size_t i = 0; i < n; i++) {
        lcm_put_u32(b, offset + a[i].object * stride);
        lcm_put_f64(b, a[i].distance);
    }
    return 0;
}

int lcm_run_quanta(lcm_rank *s)
{
    for (size_t i = 0; i < s->nTask;) {
        lcm_task *t = &s->aTask[i];
        uint64_t before = genie_lc_walk_distances(t->walk);
        int done;
        genie_status rc = genie_lc_walk_step(t->walk, s->quantum, &done);
        if (rc != GENIE_OK)
            return lcm_fail(s, "a walk", rc);
        s->nDist += genie_lc_walk_distances(t->walk) - before;
        if (!done) {
            i++;
            continue;
        }
        int st = task_done(s, t);
        genie_lc_walk_free(t->walk);
        free(t->payload);
        *t = s->aTask[--s->nTask];
        if (st != 0)
            return -1;
    }
    return 0;
}

int lcm_on_records(lcm_rank *s, lcm_answer_fn xAnswer, void *ctx)
{
    lcm_rd r = {s->net.aIn, s->net.aIn + s->net.nIn, 0};
    while (r.p < r.end) {
        int kind = (int)lcm_u32(&r), st = 0;
        switch (kind) {
        case LCM_QUERY: st = on_query(s, &r); break;
        case LCM_SEARCH:
        case LCM_PLAN: st = on_work(s, kind, &r); break;
        case LCM_PART: {
            uint32_t query = lcm_u32(&r);
            uint64_t nDist = lcm_u64(&r);
            uint32_t n = lcm_u32(&r);
            if (r.bad || n > (size_t)(r.end - r.p) / 12)
                return lcm_fail(s, "a malformed answer record arrived", GENIE_OK);
            st = pend_add(s, query, NULL, n, nDist, &r);
            break;
        }
        case LCM_ANSWER:
            if (!xAnswer)
                return lcm_fail(s, "an answer arrived at a processor", GENIE_OK);
            xAnswer(ctx, &r);
            break;
        default: return lcm_fail(s, "a record of an unknown kind arrived", GENIE_OK);
        }
        if (st != 0)
            return -1;
        if (r.bad)
            return lcm_fail(s, "a malformed record arrived", GENIE_OK);
    }
    return 0;
}


void lcm_rank_free(lcm_rank *s)
{
    for (size_t i = 0; i < s->nTask; i++) {
        genie_lc_walk_free(s->aTask[i].walk);
        free(s->aTask[i].payload);
    }
    free(s->aTask);
    for (size_t i = 0; i < s->nPend; i++)
        free(s->aPend[i].aHit);
    free(s->aPend);
    s->aTask = NULL;
    s->aPend = NULL;
    s->nTask = s->nPend = 0;
}
