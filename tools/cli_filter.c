/*
 * The filter options of `genie search` (every index type): allow-lists by
 * object id or label, and conditions on a table's columns.  Each option
 * narrows the search to the objects it allows; several options AND.  The
 * options are collected while the command line is parsed and made into
 * one genie_filter once the index is open (cli.h): a search command puts
 * CLI_FILTER_LONG_OPTIONS in its table (cli_search_option() takes their
 * codes), and genie search's loop (cli_search.c) makes the filter after
 * the open, through the type table's filters (itype_filter.c).
 *
 * The collected options live in this file's state: one command runs per
 * process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "itype.h"

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

/* AND one filter option into @p f. */
static int narrow(const char *zCmd, const itype_index *ix, int code, const char *zArg, genie_filter *f)
{
    char zErr[512];
    int bad;
    if (code == CLI_OPT_WHERE) {
        bad = itype_filter_where(ix, f, zArg, zErr, sizeof zErr);
    } else {
        uint64_t *a = NULL;
        size_t n = 0;
        int status = cli_read_numbers(zArg, &a, &n);
        if (status != CLI_EXIT_OK)
            return status;
        bad = code == CLI_OPT_FILTER_IDS ? itype_filter_ids(ix, f, a, n, zErr, sizeof zErr)
                                         : itype_filter_labels(ix, f, a, n, zErr, sizeof zErr);
        free(a);
    }
    if (!bad)
        return CLI_EXIT_OK;
    fprintf(stderr, "genie %s: %s %s: %s\n", zCmd,
            code == CLI_OPT_WHERE ? "--where" : code == CLI_OPT_FILTER_IDS ? "--filter-ids" : "--filter-labels", zArg,
            zErr);
    return code == CLI_OPT_WHERE && !ix->pType->xWhere ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
}

int cli_filter_make(const char *zCmd, const itype_index *ix, genie_filter **pOut)
{
    *pOut = NULL;
    if (gFilter.n == 0)
        return CLI_EXIT_OK;
    char zErr[512];
    genie_filter *f = NULL;
    if (itype_filter_new(ix, &f, zErr, sizeof zErr) != 0) {
        fprintf(stderr, "genie %s: %s\n", zCmd, zErr);
        return CLI_EXIT_FAIL;
    }
    int status = CLI_EXIT_OK;
    for (int i = 0; i < gFilter.n && status == CLI_EXIT_OK; i++)
        status = narrow(zCmd, ix, gFilter.aCode[i], gFilter.azArg[i], f);
    if (status != CLI_EXIT_OK) {
        genie_filter_free(f);
        return status;
    }
    *pOut = f;
    return CLI_EXIT_OK;
}
