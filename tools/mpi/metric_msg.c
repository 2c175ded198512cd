/*
 * genie-mpi metric's records and superstep exchange (metric_msg.h says
 * what is sent).
 */
#include "metric_msg.h"

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

void lcm_put(lcm_buf *b, const void *p, size_t n)
{
    if (b->failed || n == 0)
        return;
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *a = realloc(b->a, cap);
        if (!a) {
            b->failed = 1;
            return;
        }
        b->a = a;
        b->cap = cap;
    }
    memcpy(b->a + b->n, p, n);
    b->n += n;
}

void lcm_put_u32(lcm_buf *b, uint32_t v)
{
    lcm_put(b, &v, sizeof v);
}

void lcm_put_u64(lcm_buf *b, uint64_t v)
{
    lcm_put(b, &v, sizeof v);
}

void lcm_put_f64(lcm_buf *b, double v)
{
    lcm_put(b, &v, sizeof v);
}

void lcm_put_hits(lcm_buf *b, const genie_lc_hit *a, uint32_t n)
{
    lcm_put_u32(b, n);
    for (uint32_t i = 0; i < n; i++) {
        lcm_put_u32(b, a[i].object);
        lcm_put_f64(b, a[i].distance);
    }
}

void lcm_buf_free(lcm_buf *b)
{
    free(b->a);
    memset(b, 0, sizeof *b);
}

const unsigned char *lcm_bytes(lcm_rd *r, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return NULL;
    }
    const unsigned char *p = r->p;
    r->p += n;
    return p;
}

uint32_t lcm_u32(lcm_rd *r)
{
    uint32_t v = 0;
    const unsigned char *p = lcm_bytes(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

uint64_t lcm_u64(lcm_rd *r)
{
    uint64_t v = 0;
    const unsigned char *p = lcm_bytes(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

double lcm_f64(lcm_rd *r)
{
    double v = 0;
    const unsigned char *p = lcm_bytes(r, sizeof v);
    if (p)
        memcpy(&v, p, sizeof v);
    return v;
}

int lcm_net_init(lcm_net *x, int rank, int size)
{
    memset(x, 0, sizeof *x);
    x->rank = rank;
    x->size = size;
    x->aOut = calloc((size_t)size, sizeof *x->aOut);
    x->aSendN = calloc((size_t)size, sizeof(int));
    x->aRecvN = calloc((size_t)size, sizeof(int));
    x->aSendOff = calloc((size_t)size, sizeof(int));
    x->aRecvOff = calloc((size_t)size, sizeof(int));
    return x->aOut && x->aSendN && x->aRecvN && x->aSendOff && x->aRecvOff ? 0 : -1;
}

void lcm_net_free(lcm_net *x)
{
    for (int i = 0; x->aOut && i < x->size; i++)
        lcm_buf_free(&x->aOut[i]);
    free(x->aOut);
    free(x->aIn);
    free(x->aSendN);
    free(x->aRecvN);
    free(x->aSendOff);
    free(x->aRecvOff);
    free(x->aSend);
    memset(x, 0, sizeof *x);
}

/* Gather the out buffers into aSend; @return 0, or -1 (too big, no memory). */
static int pack_send(lcm_net *x)
{
    size_t total = 0;
    for (int i = 0; i < x->size; i++) {
        if (x->aOut[i].failed || x->aOut[i].n > (size_t)INT_MAX - total)
            return -1;
        x->aSendOff[i] = (int)total;
        x->aSendN[i] = (int)x->aOut[i].n;
        total += x->aOut[i].n;
    }
    if (total > x->nSendCap) {
        unsigned char *a = realloc(x->aSend, total);
        if (!a)
            return -1;
        x->aSend = a;
        x->nSendCap = total;
    }
    for (int i = 0; i < x->size; i++) {
        if (x->aOut[i].n)
            memcpy(x->aSend + x->aSendOff[i], x->aOut[i].a, x->aOut[i].n);
        x->aOut[i].n = 0;
    }
    return 0;
}

void lcm_exchange(lcm_net *x, int *pFlag)
{
    int flag = *pFlag;
    if (pack_send(x) != 0) {
        flag = LCM_FAILED;
        for (int i = 0; i < x->size; i++)
            x->aSendN[i] = 0; /* what this rank sends and what the others expect agree */
    }
    MPI_Alltoall(x->aSendN, 1, MPI_INT, x->aRecvN, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int i = 0; i < x->size; i++) {
        x->aRecvOff[i] = (int)total;
        total += (size_t)x->aRecvN[i];
    }
    if (total > INT_MAX) {
        flag = LCM_FAILED;
    } else if (total > x->nInCap) {
        unsigned char *a = realloc(x->aIn, total);
        if (a) {
            x->aIn = a;
            x->nInCap = total;
        } else {
            flag = LCM_FAILED;
        }
    }
    /* Agree first, so that either every rank exchanges the bytes or none. */
    int all;
    MPI_Allreduce(&flag, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    x->nIn = 0;
    if (all < LCM_FAILED) {
        MPI_Alltoallv(x->aSend, x->aSendN, x->aSendOff, MPI_BYTE, x->aIn, x->aRecvN, x->aRecvOff, MPI_BYTE,
                      MPI_COMM_WORLD);
        x->nIn = total;
    }
    x->nStep++;
    *pFlag = all;
}
