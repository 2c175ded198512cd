/*
 * The line reader the line-oriented front-ends share (cli.h): it reads a
 * batch of lines into one buffer, so an input or query file of any length
 * is handled in bounded memory; and the escaping of stored records.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_lines_open(cli_lines *l, const char *path)
{
    memset(l, 0, sizeof *l);
    l->zName = path && strcmp(path, "-") != 0 ? path : "(stdin)";
    l->f = path && strcmp(path, "-") != 0 ? fopen(path, "rb") : stdin;
    if (!l->f) {
        fprintf(stderr, "genie: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

void cli_lines_close(cli_lines *l)
{
    if (l->f && l->f != stdin)
        fclose(l->f);
    free(l->zLine);
    free(l->aBuf);
    free(l->azLine);
    free(l->anLine);
    memset(l, 0, sizeof *l);
}

static int lines_reserve(cli_lines *l, size_t nBytes, size_t nLines)
{
    if (nBytes > l->nBufCap) {
        size_t cap = l->nBufCap ? l->nBufCap : 65536;
        while (cap < nBytes)
            cap *= 2;
        char *a = realloc(l->aBuf, cap);
        if (!a)
            return -1;
        l->aBuf = a;
        l->nBufCap = cap;
    }
    if (nLines > l->nLineCap) {
        size_t cap = l->nLineCap ? l->nLineCap * 2 : 1024;
        const char **az = realloc(l->azLine, cap * sizeof *az);
        if (az)
            l->azLine = az;
        size_t *an = realloc(l->anLine, cap * sizeof *an);
        if (an)
            l->anLine = an;
        if (!az || !an)
            return -1;
        l->nLineCap = cap;
    }
    return 0;
}

long cli_lines_read(cli_lines *l, size_t max)
{
    size_t nBytes = 0, n = 0;
    while (n < max) {
        ssize_t r = getline(&l->zLine, &l->nLineBuf, l->f);
        if (r < 0)
            break;
        l->lineNo++;
        size_t len = (size_t)r;
        if (len && l->zLine[len - 1] == '\n')
            len--;
        if (len && l->zLine[len - 1] == '\r')
            len--;
        if (lines_reserve(l, nBytes + len + 1, n + 1) != 0) {
            fprintf(stderr, "genie: out of memory reading %s\n", l->zName);
            return -1;
        }
        memcpy(l->aBuf + nBytes, l->zLine, len);
        l->aBuf[nBytes + len] = '\0';
        l->anLine[n] = len;
        /* offsets for now: the buffer may move while growing */
        l->azLine[n] = (const char *)(uintptr_t)nBytes;
        nBytes += len + 1;
        n++;
    }
    if (ferror(l->f)) {
        fprintf(stderr, "genie: cannot read %s: %s\n", l->zName, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        l->azLine[i] = l->aBuf + (uintptr_t)l->azLine[i];
    l->nLine = n;
    return (long)n;
}

/* cli_build_lines()'s count of the lines it hands on. */
typedef struct line_counter {
    cli_line_fn xAdd;
    void *pBuilder;
    uint64_t n;
} line_counter;

static genie_status count_line(void *ctx, const char *z, size_t n)
{
    line_counter *c = ctx;
    c->n++;
    return c->xAdd(c->pBuilder, z, n);
}

int cli_build_lines(const char *zObjects, cli_line_fn xAdd, void *pBuilder, int argc, char **argv,
                    uint64_t *pnObjects)
{
    line_counter c = {xAdd, pBuilder, 0};
    int status = cli_feed_lines(argv + optind, argc - optind, count_line, &c);
    *pnObjects = c.n;
    if (status == CLI_EXIT_OK && c.n == 0) {
        fprintf(stderr, "genie: no %s to index (empty input)\n", zObjects);
        status = CLI_EXIT_FAIL;
    }
    return status;
}

void cli_put_escaped(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\\')
            fputs("\\\\", stdout);
        else
            putchar(ch);
    }
}

void cli_put_record(const genie_index *idx, uint32_t object, int show)
{
    const char *z;
    size_t n;
    if (!show || !idx || genie_index_record(idx, object, &z, &n) != GENIE_OK)
        return;
    putchar('\t');
    cli_put_escaped(z, n);
}

int cli_feed_lines(char **azFile, int nFile, cli_line_fn xAdd, void *ctx)
{
    genie_status rc = GENIE_OK;
    for (int i = 0; i < nFile; i++) {
        cli_lines l;
        if (cli_lines_open(&l, azFile[i]) != 0)
            return CLI_EXIT_FAIL;
        long n;
        while (rc == GENIE_OK && (n = cli_lines_read(&l, 65536)) > 0)
            for (long j = 0; rc == GENIE_OK && j < n; j++)
                rc = xAdd(ctx, l.azLine[j], l.anLine[j]);
        cli_lines_close(&l);
        if (rc != GENIE_OK)
            return cli_fail(rc);
        if (n < 0)
            return CLI_EXIT_FAIL;
    }
    return CLI_EXIT_OK;
}
