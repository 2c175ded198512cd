/*
 * Query files read in batches in the form an index's search takes
 * (query_source.c), for `genie search` (cli_search.c) and genie-mpi's
 * broker, as the index's entry writes its queries:
 *   ITEMS, TEXT, ROW  through the entry's reader (genie_query_reader,
 *                     genie_table_reader): items, min_count applied
 *   LINE              one string per line (cli_lines)
 *   VECTOR            a vector file (genie_vectors_read), read whole and
 *                     cut into batches of rows
 * "-" is standard input (not for vectors: a file is read whole).
 */
#ifndef GENIE_TOOLS_QUERY_SOURCE_H
#define GENIE_TOOLS_QUERY_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"
#include "itype.h"

/* Batches in flight at most (genie-mpi's --depth). */
#define QUERY_SOURCE_SLOTS 8

typedef struct query_source {
    const itype_index *ix;
    itype_batch_form form;
    size_t batch;
    uint32_t minCount;
    genie_status rc;                      /* after a failure: the library's status, or GENIE_OK when printed */
    void *pReader;                        /* items: the entry's reader */
    genie_queries *aQ[QUERY_SOURCE_SLOTS]; /* items: one per batch in flight */
    genie_vectors v;                      /* vectors: all of them */
    uint64_t nextVector;
    cli_lines lines;                      /* strings */
    int linesOpen;
} query_source;

/**
 * Open @p zQueries for batches of @p batch queries of @p ix's form, @p
 * nSlot of them in flight; @p zDelim: records between lines equal to it
 * (types with ITYPE_F_DELIMITER).
 * @return 0, or -1: s->rc holds the library's status (its message in
 *         genie_last_error()), or GENIE_OK when the failure was printed.
 */
int query_source_open(query_source *s, const itype_index *ix, const char *zQueries, const char *zDelim,
                      uint32_t minCount, size_t batch, unsigned nSlot);
/**
 * The next batch into @p b, held in slot @p slot until that slot is read
 * again (strings: until the next read).  @return its size, 0 at the end,
 * or -1 (s->rc as above).
 */
long query_source_next(query_source *s, unsigned slot, itype_batch *b);
void query_source_close(query_source *s);

#endif
