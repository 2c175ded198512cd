/*
 * The parts every vector reader shares (vectors_io.c for the binary
 * formats, vectors_json.c for GloVe JSON): the whole file read into one
 * buffer (gunzipped through zlib's gzread, which passes plain files
 * through unchanged; a build without zlib refuses gzip'd files), the
 * row-major float array allocated after its size is checked, and the
 * NaN/Inf check.
 */
#include "io/vectors_buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#ifdef GENIE_HAVE_ZLIB
#include <zlib.h>
#endif

#include "util/error.h"

#ifdef GENIE_HAVE_ZLIB
typedef gzFile vec_file;
#define vec_open(path) gzopen(path, "rb")
#define vec_close(f) gzclose(f)
static long vec_read(vec_file f, void *p, size_t n, const char **pzErr)
{
    int got = gzread(f, p, (unsigned)n), errnum;
    if (got < 0) {
        const char *z = gzerror(f, &errnum);
        *pzErr = errnum == Z_ERRNO ? strerror(errno) : z;
    }
    return got;
}
#else
typedef FILE *vec_file;
#define vec_open(path) fopen(path, "rb")
#define vec_close(f) fclose(f)
static long vec_read(vec_file f, void *p, size_t n, const char **pzErr)
{
    size_t got = fread(p, 1, n, f);
    if (got == 0 && ferror(f)) {
        *pzErr = strerror(errno);
        return -1;
    }
    return (long)got;
}
#endif

genie_status vecio_read_all(const char *path, vecio_check_fn check, void *ctx, unsigned char **pBuf, size_t *pN)
{
    *pBuf = NULL;
    *pN = 0;
    vec_file f = vec_open(path);
    if (!f)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    size_t n = 0, cap = 1 << 16;
    unsigned char *a = malloc(cap + 1);
    genie_status rc = GENIE_OK;
    if (!a) {
        rc = util_error(GENIE_ENOMEM, "out of memory reading %s", path);
        goto done;
    }
    for (;;) {
        if (n == cap) {
            unsigned char *p = realloc(a, cap * 2 + 1);
            if (!p) {
                rc = util_error(GENIE_ENOMEM, "out of memory reading %s", path);
                goto done;
            }
            a = p;
            cap *= 2;
        }
        const char *zErr = "";
        long got = vec_read(f, a + n, (cap - n) > (1u << 30) ? (1u << 30) : cap - n, &zErr);
        if (got < 0) {
            rc = util_error(GENIE_EIO, "%s: read failed: %s", path, zErr);
            goto done;
        }
        if (got == 0)
            break;
        n += (size_t)got;
        /* Refuse a bad header or a body longer than it says as soon as
         * the bytes show it, not after gunzipping all of a huge file. */
        if (check && (rc = check(a, n, ctx)) != GENIE_OK)
            goto done;
    }
    a[n] = 0; /* the JSON reader relies on a terminating NUL */
#ifndef GENIE_HAVE_ZLIB
    if (n >= 2 && a[0] == 0x1f && a[1] == 0x8b)
        rc = util_error(GENIE_ENOTSUP, "%s is gzip'd and this genie was built without zlib: gunzip it first", path);
#endif
done:
    vec_close(f);
    if (rc != GENIE_OK) {
        free(a);
        return rc;
    }
    *pBuf = a;
    *pN = n;
    return GENIE_OK;
}

genie_status vecio_alloc(genie_vectors *v, uint64_t n, uint32_t dim, const char *path)
{
    v->n = n;
    v->dim = dim;
    v->data = NULL;
    if (n == 0)
        return util_error(GENIE_EINVAL, "%s: no vectors", path);
    if (dim == 0 || dim > VEC_MAX_DIM)
        return util_error(GENIE_EINVAL, "%s: dimension %u outside 1..%u", path, dim, VEC_MAX_DIM);
    if (n > SIZE_MAX / 4 / dim)
        return util_error(GENIE_ENOMEM, "%s: %llu vectors of %u values do not fit in memory", path,
                          (unsigned long long)n, dim);
    v->data = malloc((size_t)n * dim * sizeof(float));
    if (!v->data)
        return util_error(GENIE_ENOMEM, "out of memory for %llu vectors of %u values (%s)",
                          (unsigned long long)n, dim, path);
    return GENIE_OK;
}

genie_status vecio_check_finite(const genie_vectors *v, const char *path)
{
    for (uint64_t i = 0; i < v->n; i++) {
        const float *p = v->data + i * v->dim;
        for (uint32_t j = 0; j < v->dim; j++)
            if (!isfinite(p[j]))
                return util_error(GENIE_EINVAL, "%s: vector %llu, component %u is %s", path,
                                  (unsigned long long)i, j, isnan(p[j]) ? "NaN" : "infinite");
    }
    return GENIE_OK;
}
