/*
 * The filter options of `genie search` (every index type): allow-lists by
 * object id or label, and conditions on a table's columns.  Each option
 * narrows the search to the objects it allows; several options AND.  The
 * options are collected while the command line is parsed and made into
 * one genie_filter once the index is open (cli.h), so a search command
 * needs three lines for them: the options in its table, their code to
 * cli_filter_option(), and cli_filter_make() after the open.
 *
 * The collected options live in this file's state: one command runs per
 * process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "genie/table.h"

#define CLI_FILTER_MAX 64 /* filter options on one command line */

static struct {
    int aCode[CLI_FILTER_MAX];
    const char *azArg[CLI_FILTER_MAX];
    int n;
} gFilter;

int cli_filter_option(const char *zCmd, int c, const char *zArg, int *pStatus)
{
    if (c != CLI_OPT_FILTER_LABELS && c != CLI_OPT_FILTER_IDS && c != CLI_OPT_WHERE)
        return 0;
    *pStatus = CLI_EXIT_OK;
    if (gFilter.n == CLI_FILTER_MAX)
        *pStatus = cli_usage_error(zCmd, "at most %d filter options", CLI_FILTER_MAX);
    else if (!*zArg)
        *pStatus = cli_usage_error(zCmd, "a filter option needs a file or a condition, not ''");
    else {
        gFilter.aCode[gFilter.n] = c;
        gFilter.azArg[gFilter.n++] = zArg;
    }
    return 1;
}

int cli_read_numbers(const char *zPath, uint64_t **paOut, size_t *pn)
{
    FILE *f = strcmp(zPath, "-") == 0 ? stdin : fopen(zPath, "r");
    if (!f) {
        fprintf(stderr, "genie: cannot open %s: %s\n", zPath, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    uint64_t *a = NULL, line = 1;
    size_t n = 0, cap = 0;
    int status = CLI_EXIT_OK, ch;
    char tok[32];
    size_t nTok = 0;
    do {
        ch = fgetc(f);
        if (ch != EOF && ch != ' ' && ch != '\t' && ch != '\r' && ch != '\n') {
            if (nTok + 1 < sizeof tok)
                tok[nTok] = (char)ch;
            nTok++;
            continue;
        }
        if (nTok) {
            uint64_t v;
            tok[nTok < sizeof tok ? nTok : sizeof tok - 1] = 0;
            if (nTok >= sizeof tok || !cli_parse_u64(tok, 0, UINT64_MAX, &v)) {
                fprintf(stderr, "genie: %s:%llu: '%s' is not an unsigned 64-bit number\n", zPath,
                        (unsigned long long)line, tok);
                status = CLI_EXIT_FAIL;
                break;
            }
            if (n == cap) {
                cap = cap ? 2 * cap : 256;
                uint64_t *b = realloc(a, cap * sizeof *b);
                if (!b) {
                    fprintf(stderr, "genie: out of memory reading %s\n", zPath);
                    status = CLI_EXIT_FAIL;
                    break;
                }
                a = b;
            }
            a[n++] = v;
            nTok = 0;
        }
        line += ch == '\n';
    } while (ch != EOF);
    if (status == CLI_EXIT_OK && ferror(f)) {
        fprintf(stderr, "genie: cannot read %s\n", zPath);
        status = CLI_EXIT_FAIL;
    }
    if (f != stdin)
        fclose(f);
    if (status != CLI_EXIT_OK) {
        free(a);
        return status;
    }
    *paOut = a;
    *pn = n;
    return CLI_EXIT_OK;
}

/* The filter of one --filter-ids or --filter-labels file, ANDed into @p f. */
static int narrow(const char *zCmd, const genie_index *idx, int code, const char *zPath, cli_filter_id_fn xId,
                  void *ctx, genie_filter *f)
{
    uint64_t *a = NULL;
    size_t n = 0;
    int status = cli_read_numbers(zPath, &a, &n);
    if (status != CLI_EXIT_OK)
        return status;
    genie_filter *g = NULL;
    uint64_t nObject = genie_filter_objects(f);
    genie_status rc = genie_filter_new(&g, nObject);
    if (rc == GENIE_OK && code == CLI_OPT_FILTER_LABELS) {
        rc = genie_filter_allow_labels(g, idx, a, n, NULL);
    } else {
        for (size_t i = 0; rc == GENIE_OK && i < n && status == CLI_EXIT_OK; i++) {
            uint64_t o = a[i];
            if ((xId && !xId(ctx, a[i], &o)) || o >= nObject) {
                fprintf(stderr, "genie %s: --filter-ids %s: %llu is not an object of the index (0 .. %lld)\n", zCmd,
                        zPath, (unsigned long long)a[i], (long long)nObject - 1);
                status = CLI_EXIT_FAIL;
            } else
                rc = genie_filter_set(g, o, 1);
        }
    }
    if (rc == GENIE_OK && status == CLI_EXIT_OK)
        rc = genie_filter_intersect(f, g);
    if (rc != GENIE_OK)
        status = cli_fail(rc);
    genie_filter_free(g);
    free(a);
    return status;
}

int cli_filter_make(const char *zCmd, const genie_index *idx, const genie_table *t, cli_filter_id_fn xId, void *ctx,
                    genie_filter **pOut)
{
    *pOut = NULL;
    if (gFilter.n == 0)
        return CLI_EXIT_OK;
    genie_index_info info;
    genie_index_get_info(idx, &info);
    genie_filter *f = NULL;
    genie_status rc = genie_filter_new(&f, info.n_objects);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    genie_filter_set_all(f, 1);
    int status = CLI_EXIT_OK;
    for (int i = 0; i < gFilter.n && status == CLI_EXIT_OK; i++) {
        if (gFilter.aCode[i] != CLI_OPT_WHERE)
            status = narrow(zCmd, idx, gFilter.aCode[i], gFilter.azArg[i], xId, ctx, f);
        else if (!t)
            status = cli_usage_error(zCmd, "--where is for table indexes (this one is %s)",
                                     genie_index_type_name(info.type));
        else if ((rc = genie_table_where(t, idx, gFilter.azArg[i], f)) != GENIE_OK)
            status = cli_fail(rc);
    }
    if (status != CLI_EXIT_OK) {
        genie_filter_free(f);
        return status;
    }
    *pOut = f;
    return CLI_EXIT_OK;
}

int cli_open_filtered(const char *zCmd, const char *zIndex, genie_index **pIdx, genie_filter **pFilter)
{
    *pFilter = NULL;
    genie_status rc = genie_index_open(zIndex, pIdx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    int status = cli_filter_make(zCmd, *pIdx, NULL, NULL, NULL, pFilter);
    if (status != CLI_EXIT_OK) {
        genie_index_close(*pIdx);
        *pIdx = NULL;
    }
    return status;
}
