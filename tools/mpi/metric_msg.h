/*
 * genie-mpi metric's messages and its superstep exchange (metric_msg.c).
 *
 * Every superstep each rank appends records to one byte buffer per
 * destination rank; lcm_exchange() delivers them all (MPI_Alltoall of the
 * sizes, MPI_Alltoallv of the bytes) and agrees on a flag (MPI_Allreduce,
 * maximum): the barrier that ends the superstep, as in the BSP model of
 * Gil-Costa, Marin and Reyes, section 4.1.  A record is a kind word and
 * the fields of that kind, packed little by little in host order (the
 * ranks of one job run one binary on hosts of one byte order); readers
 * check every length against the bytes that arrived.
 *
 *   QUERY   broker -> ranker:      query, payload
 *   SEARCH  ranker -> processor:   query, owner, payload               (LL)
 *   PLAN    ranker -> processor:   query, owner, payload, stop, radius,
 *                                  n, n x (cluster, center distance)   (LG)
 *   PART    processor -> ranker:   query, distances, n, n x (object, distance)
 *   ANSWER  ranker -> broker:      as PART, the merged answer
 *
 * A payload is the query's bytes: dim floats, or the string.
 */
#ifndef GENIE_MPI_METRIC_MSG_H
#define GENIE_MPI_METRIC_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "genie/metric.h"

enum { LCM_QUERY = 1, LCM_SEARCH, LCM_PLAN, LCM_PART, LCM_ANSWER };

/* The flags lcm_exchange() agrees on (the largest wins). */
enum { LCM_GO = 0, LCM_DONE = 1, LCM_FAILED = 2 };

typedef struct lcm_buf {
    unsigned char *a;
    size_t n, cap;
    int failed; /* out of memory: the rank fails at the next exchange */
} lcm_buf;

void lcm_put(lcm_buf *b, const void *p, size_t n);
void lcm_put_u32(lcm_buf *b, uint32_t v);
void lcm_put_u64(lcm_buf *b, uint64_t v);
void lcm_put_f64(lcm_buf *b, double v);
void lcm_put_hits(lcm_buf *b, const genie_lc_hit *a, uint32_t n);
void lcm_buf_free(lcm_buf *b);

/* A reader over received bytes; any read past the end sets bad. */
typedef struct lcm_rd {
    const unsigned char *p, *end;
    int bad;
} lcm_rd;

uint32_t lcm_u32(lcm_rd *r);
uint64_t lcm_u64(lcm_rd *r);
double lcm_f64(lcm_rd *r);
/** @return a pointer to the next @p n bytes (NULL and bad when fewer remain). */
const unsigned char *lcm_bytes(lcm_rd *r, size_t n);

/* One rank's view of the exchange. */
typedef struct lcm_net {
    int rank, size;
    lcm_buf *aOut;        /* size buffers, one per destination */
    unsigned char *aIn;   /* what arrived, from every rank back to back */
    size_t nIn, nInCap;
    int *aSendN, *aRecvN, *aSendOff, *aRecvOff;
    unsigned char *aSend;
    size_t nSendCap;
    uint64_t nStep;       /* supersteps so far */
} lcm_net;

/** @return 0, or -1 when out of memory. */
int lcm_net_init(lcm_net *x, int rank, int size);
void lcm_net_free(lcm_net *x);
/**
 * End the superstep: send every aOut buffer (then empty them), receive
 * into aIn / nIn, and agree on a flag.
 * @param[in,out] pFlag  this rank's flag in; the largest of all ranks out
 *                       (LCM_FAILED also when a buffer overflowed here).
 */
void lcm_exchange(lcm_net *x, int *pFlag);

#endif
