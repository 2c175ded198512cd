/*
 * genie add, genie delete, genie compact: the writes of a live index
 * (docs/LIVE.md), through genie_writer_* (genie.h).  Each looks up the
 * entry of the index's type (tools/itype.h): a type without writes is
 * refused, and the entry says which input options genie add takes.  Each
 * takes the index's lock for as long as it runs; another writer gets a
 * clear error (exit status 1) and can try again.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "itype.h"

static const char zAddHelp[] =
    "Usage: genie add [options] INDEX INPUT\n"
    "\n"
    "Add the objects of INPUT (\"-\": standard input) to INDEX, in the input\n"
    "format of its type as genie build reads it: keyword lines, documents,\n"
    "set lines, strings, table rows (CSV or ARFF with a header naming every\n"
    "column), or vectors (fvecs, bvecs, npy, ...); a metric index its strings\n"
    "or sets (one a line) or vectors.  A docs index takes no writes.  They are turned into\n"
    "keywords with the index's parameters (vocabulary, hash functions,\n"
    "n-grams, bins) and written to INDEX.wal, batch by batch; each batch is\n"
    "on disk before the next is read, and searches that open INDEX after it\n"
    "see it.  Prints each added object's label, one per line: the next free\n"
    "labels (one more than the largest ever used; a file built without labels\n"
    "has its ids as labels), or with --labels the input's.\n"
    "\n"
    "      --labels            keywords: the first number of each line is the\n"
    "                          object's label (it must not be in use)\n"
    "      --delimiter LINE    text: documents are blocks of lines between lines\n"
    "                          equal to LINE\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

static const char zDeleteHelp[] =
    "Usage: genie delete [options] INDEX --labels FILE\n"
    "\n"
    "Delete from INDEX every object carrying one of the labels FILE lists\n"
    "(white space between them; \"-\": standard input), durably, in one log\n"
    "record.  Searches never answer a deleted object; genie compact drops\n"
    "them from the file.  Labels no object carries are skipped (counted on\n"
    "standard error).\n"
    "\n"
    "      --labels FILE       the labels to delete\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

static const char zCompactHelp[] =
    "Usage: genie compact [options] INDEX\n"
    "\n"
    "Write INDEX with every write of INDEX.wal applied to a new file, rename\n"
    "it over INDEX and start an empty log.  Deleted objects are dropped, the\n"
    "others numbered from 0 in their order, and every object keeps its label\n"
    "(the new file stores them).  Searches running meanwhile keep the file\n"
    "they opened; a crash leaves the old file and its log, or the new file.\n"
    "\n"
    "  -q, --quiet             no summary on standard error\n"
    "  -h, --help              show this help\n";

/*
 * The entry of @p zIndex's type, when the type takes writes (else printed:
 * a docs index is rebuilt).  @return CLI_EXIT_OK, or CLI_EXIT_FAIL.
 */
static int writable_type(const char *zCmd, const char *zIndex, const itype **pT)
{
    genie_index_type type;
    genie_status rc = genie_index_file_type(zIndex, &type);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    *pT = itype_by_type(type);
    if (!*pT || !(*pT)->pWrites) {
        fprintf(stderr, "genie %s: %s is a %s index, which takes no writes (its file is ordered by the build's "
                        "scores): rebuild it\n",
                zCmd, zIndex, genie_index_type_name(type));
        return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}

/* Open the writer; say so when the log's last record was torn (a writer died writing it). */
static int open_writer(const char *zIndex, genie_writer **pW)
{
    genie_status rc = genie_writer_open(zIndex, pW);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    genie_live_info li;
    genie_index_live_info(genie_writer_index(*pW), &li);
    if (li.torn_bytes)
        fprintf(stderr, "genie: %s.wal: dropped a torn last record (%llu bytes): a writer died while writing it, "
                        "before it was acknowledged\n",
                zIndex, (unsigned long long)li.torn_bytes);
    return CLI_EXIT_OK;
}

static void print_labels(void *ctx, const uint64_t *aLabel, size_t n)
{
    (void)ctx;
    for (size_t i = 0; i < n; i++)
        printf("%llu\n", (unsigned long long)aLabel[i]);
}

int cmd_add(int argc, char **argv)
{
    enum { OPT_LABELS = 0x200, OPT_DELIMITER };
    static const struct option aOpt[] = {{"labels", no_argument, 0, OPT_LABELS},
                                         {"delimiter", required_argument, 0, OPT_DELIMITER},
                                         {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    genie_add_options o;
    genie_add_options_init(&o);
    o.added = print_labels;
    int c, quiet = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", aOpt, NULL)) != -1) {
        switch (c) {
        case OPT_LABELS: o.labels = 1; break;
        case OPT_DELIMITER: o.delimiter = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': cli_help(zAddHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("add", "bad option");
        }
    }
    if (optind + 2 != argc)
        return cli_usage_error("add", "expected INDEX and INPUT");
    if (o.delimiter && !*o.delimiter)
        return cli_usage_error("add", "--delimiter must not be empty");
    const itype *t = NULL;
    int st = writable_type("add", argv[optind], &t);
    if (st != CLI_EXIT_OK)
        return st;
    if (o.labels && !(t->pWrites->flags & ITYPE_W_LABELS))
        return cli_usage_error("add", "--labels is for keywords indexes (%s is %s): give labels by genie serve or C",
                               argv[optind], t->zName);
    if (o.delimiter && !(t->pWrites->flags & ITYPE_W_DELIMITER))
        return cli_usage_error("add", "--delimiter is for text indexes (%s is %s)", argv[optind], t->zName);
    genie_writer *w;
    st = open_writer(argv[optind], &w);
    if (st != CLI_EXIT_OK)
        return st;
    double t0 = util_now();
    uint64_t n = 0;
    genie_status rc = genie_writer_add_file(w, argv[optind + 1], &o, &n);
    genie_writer_close(w);
    if (fflush(stdout) != 0 && rc == GENIE_OK) {
        fprintf(stderr, "genie: cannot write the labels (the objects were added)\n");
        return CLI_EXIT_FAIL;
    }
    if (rc != GENIE_OK) {
        st = cli_fail(rc);
        if (n)
            fprintf(stderr, "genie: %llu objects of the batches before it were added\n", (unsigned long long)n);
        return st;
    }
    if (!quiet)
        fprintf(stderr, "genie: added %llu object%s to %s in %.3f s\n", (unsigned long long)n, n == 1 ? "" : "s",
                argv[optind], util_now() - t0);
    return CLI_EXIT_OK;
}

int cmd_delete(int argc, char **argv)
{
    enum { OPT_LABELS = 0x200 };
    static const struct option aOpt[] = {{"labels", required_argument, 0, OPT_LABELS}, {"quiet", no_argument, 0, 'q'},
                                         {"help", no_argument, 0, 'h'},                {0, 0, 0, 0}};
    const char *zLabels = NULL;
    int c, quiet = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", aOpt, NULL)) != -1) {
        switch (c) {
        case OPT_LABELS: zLabels = optarg; break;
        case 'q': quiet = 1; break;
        case 'h': cli_help(zDeleteHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("delete", "bad option");
        }
    }
    if (optind + 1 != argc || !zLabels)
        return cli_usage_error("delete", "expected INDEX and --labels FILE");
    const itype *t = NULL;
    int st = writable_type("delete", argv[optind], &t);
    if (st != CLI_EXIT_OK)
        return st;
    uint64_t *aLabel = NULL;
    size_t nLabel = 0, nDeleted = 0;
    st = cli_read_numbers(zLabels, &aLabel, &nLabel);
    if (st != CLI_EXIT_OK)
        return st;
    genie_writer *w;
    st = open_writer(argv[optind], &w);
    if (st == CLI_EXIT_OK) {
        genie_status rc = genie_writer_delete(w, aLabel, nLabel, &nDeleted);
        genie_writer_close(w);
        if (rc != GENIE_OK)
            st = cli_fail(rc);
        else if (!quiet)
            fprintf(stderr, "genie: deleted %zu object%s of %s (%zu label%s given)\n", nDeleted, nDeleted == 1 ? "" : "s",
                    argv[optind], nLabel, nLabel == 1 ? "" : "s");
    }
    free(aLabel);
    return st;
}

int cmd_compact(int argc, char **argv)
{
    static const struct option aOpt[] = {{"quiet", no_argument, 0, 'q'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c, quiet = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "qh", aOpt, NULL)) != -1) {
        switch (c) {
        case 'q': quiet = 1; break;
        case 'h': cli_help(zCompactHelp); return CLI_EXIT_OK;
        default: return cli_usage_error("compact", "bad option");
        }
    }
    if (optind + 1 != argc)
        return cli_usage_error("compact", "expected INDEX");
    const itype *t = NULL;
    int st = writable_type("compact", argv[optind], &t);
    if (st != CLI_EXIT_OK)
        return st;
    genie_writer *w;
    st = open_writer(argv[optind], &w);
    if (st != CLI_EXIT_OK)
        return st;
    double t0 = util_now();
    genie_status rc = genie_writer_compact(w);
    genie_index_info info;
    if (rc == GENIE_OK)
        genie_index_get_info(genie_writer_index(w), &info);
    genie_writer_close(w);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    if (!quiet)
        fprintf(stderr, "genie: compacted %s: %llu objects in %.3f s\n", argv[optind],
                (unsigned long long)info.n_objects, util_now() - t0);
    return CLI_EXIT_OK;
}
