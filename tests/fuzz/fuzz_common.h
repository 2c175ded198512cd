/*
 * What the libFuzzer harnesses share: a scratch folder per process (in
 * /dev/shm when it exists) for the inputs that genie reads by path, since
 * the format of a vectors or table file comes from its name.
 *
 * A harness returns 0 for every input: a clean error is a fine answer.  A
 * finding is what the sanitizers or probe.c's abort() report: a crash, a
 * leak, undefined behaviour, a broken promise, or (libFuzzer's
 * -rss_limit_mb / -malloc_limit_mb / -timeout) memory or time out of
 * proportion to the input.
 */
#ifndef GENIE_FUZZ_COMMON_H
#define GENIE_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* @p name inside this process's scratch folder (made on first use). */
static inline const char *fuzz_path(const char *name)
{
    static char zDir[256];
    static char z[4][512];
    static int i;
    if (!zDir[0]) {
        const char *zBase = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(zDir, sizeof zDir, "%s/genie-fuzz-%d-XXXXXX", zBase, (int)getpid());
        if (!mkdtemp(zDir))
            abort();
    }
    i = (i + 1) % 4;
    snprintf(z[i], sizeof z[i], "%s/%s", zDir, name);
    return z[i];
}

/* Write @p n bytes to @p path (replacing it); aborts when it cannot. */
static inline void fuzz_write(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f || (n && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        abort();
}

#endif
