/*
 * The broker's output (print.c): each merged answer printed exactly as
 * `genie search` prints that index type's answers, through the printers of
 * the type's entry in the type table (its xFromHits turns the merged hits
 * back into the type's hits, its xTsv and xJson print them), so that both
 * print the same bytes.  A partial answer (--allow-partial) gets
 * "partial":true after the query number of its JSON object.
 */
#ifndef GENIE_MPI_PRINT_H
#define GENIE_MPI_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "../itype.h"
#include "../json_out.h"
#include "wire.h"

typedef struct mpi_printer {
    const itype *pType;      /* the index's type (set before mpi_printer_init) */
    itype_printer pr;        /* where labels and records are (shard maps: xLocate), show */
    int json;
    json_buf jb;
    void *aHit;              /* scratch of k hits in the type's own struct */
} mpi_printer;

/** Scratch for answers of up to @p k hits.  @return 0, or -1 when out of memory. */
int mpi_printer_init(mpi_printer *p, uint32_t k);
void mpi_printer_free(mpi_printer *p);

/**
 * Print query @p queryNo's merged hits (best first, at most k) with the
 * options of p->pr.pOpt; certified: sequences; usedK: the query's word
 * (itype_hits_fn).  @return 0, or -1 when out of memory (printed).
 */
int mpi_print_query(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                    int partial);

#endif
