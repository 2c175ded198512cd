/* Shared CLI helpers (see cli.h). */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
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

int cli_fail(genie_status rc)
{
    const char *zMsg = genie_last_error();
    fprintf(stderr, "genie: %s\n", zMsg[0] ? zMsg : genie_strerror(rc));
    return CLI_EXIT_FAIL;
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

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_start(cli_progress *p, const char *zWhat, int quiet)
{
    p->zWhat = zWhat;
    p->tStart = p->tLast = cli_now();
    p->enabled = !quiet && isatty(STDERR_FILENO);
    p->shown = 0;
}

void cli_progress_update(cli_progress *p, uint64_t done, uint64_t total)
{
    if (!p->enabled)
        return;
    double t = cli_now();
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

int cli_engine_option(int c, const char *zArg, genie_search_options *opt, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'b':
        if (genie_backend_parse(zArg, &opt->backend) != GENIE_OK)
            *pStatus = cli_usage_error("search", "%s", genie_last_error());
        return 1;
    case 'j':
        if (!cli_parse_u64(zArg, 1, 4096, &v))
            *pStatus = cli_usage_error("search", "--threads must be 1..4096, not '%s'", zArg);
        else
            opt->threads = (unsigned)v;
        return 1;
    case 'G':
        if (!cli_parse_bytes(zArg, &opt->gpu_memory))
            *pStatus = cli_usage_error("search", "--gpu-memory must be a size like 8G, not '%s'", zArg);
        return 1;
    case 'B':
        opt->load_balance = 1;
        return 1;
    default:
        return 0;
    }
}

int cli_build_option(int c, const char *zArg, genie_build_options *opt, int *pStatus)
{
    uint64_t v;
    *pStatus = CLI_EXIT_OK;
    switch (c) {
    case 'L':
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &v))
            *pStatus = cli_usage_error("build", "--sublist-length must be 1..4294967295, not '%s'", zArg);
        else
            opt->sublist_length = (uint32_t)v;
        return 1;
    case CLI_OPT_PART_OBJECTS:
        if (!cli_parse_u64(zArg, 1, UINT32_MAX, &opt->part_objects))
            *pStatus = cli_usage_error("build", "--part-objects must be 1..4294967295, not '%s'", zArg);
        break;
    case CLI_OPT_PART_BYTES:
        if (!cli_parse_bytes(zArg, &opt->part_bytes))
            *pStatus = cli_usage_error("build", "--part-bytes must be a size above 0 (e.g. 64M), not '%s'", zArg);
        break;
    case CLI_OPT_BUILD_GPU_MEMORY:
        if (!cli_parse_bytes(zArg, &opt->part_gpu_memory))
            *pStatus = cli_usage_error("build", "--gpu-memory must be a size above 0 (e.g. 8G), not '%s'", zArg);
        break;
    default:
        return 0;
    }
    if (*pStatus == CLI_EXIT_OK && opt->part_objects && opt->part_bytes)
        *pStatus = cli_usage_error("build", "give --part-objects or --part-bytes, not both");
    return 1;
}
