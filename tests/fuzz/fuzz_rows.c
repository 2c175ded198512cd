/*
 * libFuzzer harness: CSV and ARFF.  The first byte picks what reads the
 * rest: the CSV or the ARFF row reader alone (every row, every field), or
 * a whole table build from it (CSV or ARFF) followed by a search of the
 * index it made (probe.c), or the table query reader of a fixed table
 * index (CSV or ARFF query rows).
 */
#include "fuzz_common.h"
#include "genie/table.h"
#include "io/rows.h"
#include "probe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A small table index for the query readers, built once. */
static genie_table *fixed_table(genie_index **pIdx)
{
    static genie_index *idx;
    static genie_table *t;
    if (!t) {
        const char *zCsv = "n,c,s\n1.5,a,x\n-2,b,y\n?,a,\n7,c,z\n";
        fuzz_write(fuzz_path("fixed.csv"), zCsv, strlen(zCsv));
        genie_table_options topt = {.bins = 8, .columns = "n,c"};
        if (genie_table_build(fuzz_path("fixed.csv"), &topt, NULL, fuzz_path("fixed.genie")) != GENIE_OK ||
            genie_index_open(fuzz_path("fixed.genie"), &idx) != GENIE_OK || genie_table_open(idx, &t) != GENIE_OK)
            abort();
    }
    *pIdx = idx;
    return t;
}

static void read_rows(const char *path)
{
    io_rows r;
    if (io_rows_open(&r, path) != GENIE_OK)
        return;
    while (io_rows_next(&r) == 1)
        for (size_t i = 0; i < r.nColumn; i++) {
            size_t n;
            int missing;
            io_rows_field(&r, i, &n, &missing);
            io_rows_column_kind(&r, i);
        }
    io_rows_close(&r);
}

static void read_queries(const char *path)
{
    genie_index *idx;
    genie_table *t = fixed_table(&idx);
    genie_table_reader *tr;
    genie_queries *q;
    if (genie_queries_new(&q) != GENIE_OK)
        return;
    if (genie_table_reader_open(&tr, t, path) == GENIE_OK) {
        size_t nRead;
        while (genie_table_reader_read(tr, q, 16, 0, &nRead) == GENIE_OK && nRead > 0) {
            genie_search_options opt;
            memset(&opt, 0, sizeof opt);
            opt.backend = GENIE_BACKEND_CPU;
            opt.k = 3;
            opt.threads = 1;
            genie_results *res;
            if (genie_search(idx, q, &opt, &res) == GENIE_OK)
                genie_results_free(res);
            genie_queries_clear(q);
        }
        genie_table_reader_close(tr);
    }
    genie_queries_free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned mode = data[0] % 6;
    const char *path = fuzz_path(mode % 2 ? "in.arff" : "in.csv");
    fuzz_write(path, data + 1, size - 1);
    if (mode < 2) {
        read_rows(path);
    } else if (mode < 4) {
        genie_table_options topt = {.bins = 16};
        if (genie_table_build(path, &topt, NULL, fuzz_path("built.genie")) == GENIE_OK &&
            probe_index(fuzz_path("built.genie")) != GENIE_OK)
            abort(); /* an index genie just wrote must open and search */
    } else {
        read_queries(path);
    }
    return 0;
}
