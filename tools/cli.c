/* Shared CLI helpers (see cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cli_usage_error(const char *zCmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "genie %s: ", zCmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'genie %s --help'.\n", zCmd);
    return CLI_EXIT_USAGE;
}

void cli_help(const char *zHelp)
{
    size_t nToken = strlen(CLI_BACKENDS);
    const char *zAt;
    while ((zAt = strstr(zHelp, CLI_BACKENDS)) != NULL) {
        size_t indent = 0;
        while (zAt - indent > zHelp && zAt[-(ptrdiff_t)indent - 1] == ' ')
            indent++;
        fwrite(zHelp, 1, (size_t)(zAt - zHelp), stdout);
        char zList[512];
        genie_backend_list(0, zList, sizeof zList);
        const char *zName = strncmp(zList, "auto, ", 6) == 0 ? zList + 6 : zList; /* auto is described above */
        size_t col = indent;
        for (int first = 1; *zName; first = 0) {
            size_t n = strcspn(zName, ",");
            if (first) {
                col += (size_t)printf("%.*s", (int)n, zName);
            } else if (col + 2 + n > 79) {
                printf(",\n%*s%.*s", (int)indent, "", (int)n, zName);
                col = indent + n;
            } else {
                col += (size_t)printf(", %.*s", (int)n, zName);
            }
            zName += n;
            zName += strspn(zName, ", ");
        }
        zHelp = zAt + nToken;
    }
    fputs(zHelp, stdout);
}

int cli_fail(genie_status rc)
{
    const char *zMsg = genie_last_error();
    fprintf(stderr, "genie: %s\n", zMsg[0] ? zMsg : genie_strerror(rc));
    return CLI_EXIT_FAIL;
}

int cli_check_output(const char *zOut, int argc, char **argv)
{
    /* Every argument may name an input: those that are no file stat()
     * skips, and the argument holding zOut itself is not an input. */
    const char **azIn = calloc((size_t)argc + 1, sizeof *azIn);
    if (!azIn)
        return cli_fail(GENIE_ENOMEM);
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        const char *z = argv[i];
        if (zOut >= z && zOut <= z + strlen(z))
            continue;
        const char *zEq = strncmp(z, "--", 2) == 0 ? strchr(z, '=') : NULL;
        azIn[n++] = zEq ? zEq + 1 : z;
    }
    azIn[n++] = "-"; /* standard input, which a build or search may read */
    genie_status rc = genie_output_check(zOut, azIn, n);
    free(azIn);
    return rc == GENIE_OK ? CLI_EXIT_OK : cli_fail(rc);
}

const char *cli_find_type_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--type") == 0) && i + 1 < argc)
            return argv[i + 1];
        if (strncmp(argv[i], "--type=", 7) == 0)
            return argv[i] + 7;
        if (strncmp(argv[i], "-t", 2) == 0 && argv[i][2])
            return argv[i] + 2;
    }
    return NULL;
}

int cli_wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return 1;
    return 0;
}

const char *cli_find_index_arg(int argc, char **argv, genie_index_type *pType)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        if (genie_index_file_type(argv[i], pType) == GENIE_OK)
            return argv[i];
    }
    return NULL;
}

int cli_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        uint64_t d = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    if (v < lo || v > hi)
        return 0;
    *out = v;
    return 1;
}

int cli_parse_separator(const char *z, char *out)
{
    if (strcmp(z, "tab") == 0 || strcmp(z, "\\t") == 0) {
        *out = '\t';
        return 1;
    }
    if (strlen(z) != 1 || z[0] == '\n')
        return 0;
    *out = z[0];
    return 1;
}

int cli_parse_bytes(const char *s, uint64_t *out)
{
    char buf[32];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf)
        return 0;
    memcpy(buf, s, n + 1);
    unsigned shift = 0;
    switch (buf[n - 1]) {
    case 'K': case 'k': shift = 10; break;
    case 'M': case 'm': shift = 20; break;
    case 'G': case 'g': shift = 30; break;
    case 'T': case 't': shift = 40; break;
    default: break;
    }
    if (shift)
        buf[n - 1] = '\0';
    uint64_t v;
    if (!cli_parse_u64(buf, 1, UINT64_MAX >> shift, &v))
        return 0;
    *out = v << shift;
    return 1;
}

void cli_progress_start(cli_progress *p, const char *zWhat, int quiet)
{
    p->zWhat = zWhat;
    p->tStart = p->tLast = util_now();
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->shown = 0;
}

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total)
{
    if (!p->enabled)
        return;
    double t = util_now();
    if (t - p->tStart < 1.0 || t - p->tLast < 0.2)
        return;
    p->tLast = t;
    p->shown = 1;
    if (total)
        fprintf(stderr, "\rgenie: %s %llu/%llu (%.0f%%, %.1f s)   ", p->zWhat, (unsigned long long)done,
                (unsigned long long)total, 100.0 * (double)done / (double)total, t - p->tStart);
    else
        fprintf(stderr, "\rgenie: %s %llu (%.1f s)   ", p->zWhat, (unsigned long long)done, t - p->tStart);
}

void cli_progress_end(cli_progress *p)
{
    if (p->shown)
        fprintf(stderr, "\r\033[K");
    p->shown = 0;
}
