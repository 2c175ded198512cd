/*
 * The broker's output (print.c): each merged answer printed exactly as
 * `genie search` prints that index type's answers, through the printers
 * genie search itself uses (search_output.c for keywords and text,
 * json_out.c for the JSON of every type), so that both print the same
 * bytes.  A partial answer (--allow-partial) gets "partial":true after
 * the query number of its JSON object.
 */
#ifndef GENIE_MPI_PRINT_H
#define GENIE_MPI_PRINT_H

#include <stddef.h>
#include <stdint.h>

#include "../json_out.h"
#include "../search_output.h"
#include "wire.h"

typedef struct mpi_printer {
    genie_index_type type;
    search_output so;        /* where labels and records are, json, show; its jb serves every type */
    genie_hit *aHit;         /* scratch of k hits in each type's own struct */
    genie_neighbor *aNb;
    genie_seq_hit *aSeq;
} mpi_printer;

/** Scratch for answers of up to @p k hits.  @return 0, or -1 when out of memory. */
int mpi_printer_init(mpi_printer *p, uint32_t k);
void mpi_printer_free(mpi_printer *p);

/**
 * Print query @p queryNo's merged hits (best first, at most k); certified
 * and usedK: sequences.  @return 0, or -1 when out of memory (printed).
 */
int mpi_print_query(mpi_printer *p, uint64_t queryNo, const wire_hit *aHit, size_t n, int certified, uint32_t usedK,
                    int partial);

#endif
