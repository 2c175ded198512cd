/*
 * The FRONTEND section of a metric index (docs/FORMAT.md, "The metric
 * index"): the List of Clusters with its stored distances, little-endian,
 * every array starting on an 8-byte boundary of the section (the section
 * itself starts on a 64-byte boundary of the file):
 *
 *   offset  size          field
 *   0       4             version (1)
 *   4       4             metric: 0 l2, 1 l1, 2 cosine, 3 edit, 4 jaccard
 *   8       4             dim (vectors; 0 otherwise)
 *   12      4             cluster size K (1 .. 2^20)
 *   16      4             m, the number of clusters (1 .. n)
 *   20      4             center heuristic: 0 farthest, 1 random
 *   24      4             flags: bit 0 center-to-center distances stored
 *   28      1             separator (jaccard), then 3 zero bytes
 *   32      8             n, the number of objects (= the index's)
 *   40      8             seed
 *   48      16            zero
 *   64      4 m           centers: object ids                 (padded to 8)
 *           4 m           member end of each cluster          (padded to 8)
 *           8 m           covering radius of each cluster (delta units)
 *           8 m           outer distance of each cluster (+inf: none after)
 *           4 (n - m)     members, cluster by cluster         (padded to 8)
 *           8 (n - m)     each member's distance to its center
 *           8 m (m-1)/2   center distances, row i holding j < i (flag bit 0)
 *           4 n dim       the vectors, float32, by object id (vectors)
 *
 * The header is written and read through the parameter codec
 * (util/codec.h), each field range-checked as it is read.
 * Strings and sets are the index's records.  Decoding checks the size
 * against the header's counts first (in 64-bit arithmetic that cannot
 * overflow: every count is bounded before it is multiplied), then each
 * array: ids in range, every object exactly once as a center or member,
 * ends non-decreasing and each cluster at most K, distances finite (outer
 * may be +inf) and non-negative, members sorted by distance within their
 * radius, radius <= outer, vectors finite.  What decoding cannot check is
 * that the stored distances are the true ones: a forged file can make
 * answers wrong, never make a search read out of bounds.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "transform/metric.h"
#include "util/codec.h"
#include "util/error.h"

static uint64_t pad8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

/* Byte offsets of the arrays, from the header's counts (all < 2^32). */
typedef struct lc_offsets {
    uint64_t center, end, radius, outer, member, memberDist, centerDist, vec, total;
} lc_offsets;

static void offsets_of(uint64_t n, uint64_t m, uint64_t dim, int matrix, lc_offsets *o)
{
    o->center = LC_HEADER_SIZE;
    o->end = o->center + pad8(4 * m);
    o->radius = o->end + pad8(4 * m);
    o->outer = o->radius + 8 * m;
    o->member = o->outer + 8 * m;
    o->memberDist = o->member + pad8(4 * (n - m));
    o->centerDist = o->memberDist + 8 * (n - m);
    o->vec = o->centerDist + (matrix ? 8 * (m * (m - 1) / 2) : 0);
    o->total = o->vec + 4 * n * dim; /* the caller bounds n, m and dim first */
}

genie_status lc_layout_encode(const lc_layout *L, unsigned char **paOut, size_t *pnOut)
{
    const genie_lc_info *f = &L->info;
    uint64_t n = f->n_objects, m = f->n_clusters;
    lc_offsets o;
    offsets_of(n, m, f->dim, L->aCenterDist != NULL, &o);
    codec_writer w;
    codec_writer_init(&w);
    codec_put_u32(&w, LC_PARAMS_VERSION);
    codec_put_u32(&w, (uint32_t)f->metric);
    codec_put_u32(&w, f->dim);
    codec_put_u32(&w, f->cluster_size);
    codec_put_u32(&w, f->n_clusters);
    codec_put_u32(&w, (uint32_t)f->centers);
    codec_put_u32(&w, L->aCenterDist ? LC_FLAG_CENTER_DISTANCES : 0);
    codec_put_u32(&w, (unsigned char)f->separator);
    codec_put_u64(&w, n);
    codec_put_u64(&w, f->seed);
    codec_put_u64(&w, 0);
    codec_put_u64(&w, 0);
    unsigned char *aHeader;
    size_t nHeader;
    GENIE_TRY(codec_writer_finish(&w, &aHeader, &nHeader, "a metric index header"));
    assert(nHeader == LC_HEADER_SIZE);
    unsigned char *p = calloc(1, (size_t)o.total);
    if (!p) {
        free(aHeader);
        return util_error(GENIE_ENOMEM, "out of memory encoding a metric index of %llu bytes",
                          (unsigned long long)o.total);
    }
    memcpy(p, aHeader, nHeader);
    free(aHeader);
    /* The host is little-endian (as the whole index format assumes), so
     * the arrays are copied as they are. */
    memcpy(p + o.center, L->aCenter, 4 * m);
    memcpy(p + o.end, L->aEnd, 4 * m);
    memcpy(p + o.radius, L->aRadius, 8 * m);
    memcpy(p + o.outer, L->aOuter, 8 * m);
    if (n > m) {
        memcpy(p + o.member, L->aMember, 4 * (n - m));
        memcpy(p + o.memberDist, L->aMemberDist, 8 * (n - m));
    }
    if (L->aCenterDist && m > 1)
        memcpy(p + o.centerDist, L->aCenterDist, 8 * (m * (m - 1) / 2));
    if (f->dim)
        memcpy(p + o.vec, L->aVec, 4 * n * f->dim);
    *paOut = p;
    *pnOut = (size_t)o.total;
    return GENIE_OK;
}

static genie_status bad(const char *what, unsigned long long a, unsigned long long b)
{
    return util_error(GENIE_ECORRUPT, "metric index: %s (%llu, %llu)", what, a, b);
}

static int dist_ok(double d)
{
    return isfinite(d) && d >= 0;
}

/* The per-cluster arrays and the members (everything but the vectors). */
static genie_status check_clusters(const lc_layout *L, unsigned char *aSeen)
{
    uint64_t n = L->info.n_objects, m = L->info.n_clusters;
    uint32_t prevEnd = 0;
    for (uint64_t i = 0; i < m; i++) {
        uint32_t c = L->aCenter[i], end = L->aEnd[i];
        if (c >= n)
            return bad("center id out of range (cluster, id)", i, c);
        if (aSeen[c >> 3] & (1u << (c & 7)))
            return bad("object stored twice (cluster, id)", i, c);
        aSeen[c >> 3] |= (unsigned char)(1u << (c & 7));
        if (end < prevEnd || end > n - m || end - prevEnd > L->info.cluster_size)
            return bad("cluster member end out of order or cluster too large (cluster, end)", i, end);
        double r = L->aRadius[i], out = L->aOuter[i];
        if (!dist_ok(r) || isnan(out) || out < r)
            return bad("bad covering radius or outer distance (cluster, bits of radius)", i, (unsigned long long)r);
        double prev = 0;
        for (uint32_t j = prevEnd; j < end; j++) {
            uint32_t o = L->aMember[j];
            double d = L->aMemberDist[j];
            if (o >= n)
                return bad("member id out of range (member, id)", j, o);
            if (aSeen[o >> 3] & (1u << (o & 7)))
                return bad("object stored twice (member, id)", j, o);
            aSeen[o >> 3] |= (unsigned char)(1u << (o & 7));
            if (!dist_ok(d) || d < prev || d > r)
                return bad("member distance not finite, unsorted or past the radius (cluster, member)", i, j);
            prev = d;
        }
        if (end == prevEnd ? r != 0 : prev != r)
            return bad("covering radius is not the farthest member's distance (cluster, members)", i, end - prevEnd);
        prevEnd = end;
    }
    if (prevEnd != n - m)
        return bad("members do not add up to the objects (members, expected)", prevEnd, n - m);
    if (L->aCenterDist)
        for (uint64_t i = 0; i < m * (m - 1) / 2; i++)
            if (!dist_ok(L->aCenterDist[i]))
                return bad("center distance not finite (entry, clusters)", i, m);
    for (uint64_t i = 0; L->aVec && i < n * L->info.dim; i++)
        if (!isfinite(L->aVec[i]))
            return bad("vector value not finite (object, dimension)", i / L->info.dim, i % L->info.dim);
    return GENIE_OK;
}

genie_status lc_layout_decode(const unsigned char *p, uint64_t nSection, uint64_t nObjects, lc_layout *L)
{
    memset(L, 0, sizeof *L);
    genie_lc_info *f = &L->info;
    codec_reader r;
    codec_reader_init(&r, p, (size_t)(nSection < LC_HEADER_SIZE ? nSection : LC_HEADER_SIZE),
                      "metric index (FRONTEND)");
    codec_get_u32_in(&r, "version", LC_PARAMS_VERSION, LC_PARAMS_VERSION);
    uint32_t metric = codec_get_u32_in(&r, "metric", 0, GENIE_LC_JACCARD);
    f->dim = codec_get_u32(&r, "dim");
    f->cluster_size = codec_get_u32_in(&r, "cluster size", 1, LC_CLUSTER_SIZE_MAX);
    f->n_clusters = codec_get_u32_in(&r, "clusters (1..objects)", 1,
                                     nObjects < UINT32_MAX ? (uint32_t)nObjects : UINT32_MAX);
    uint32_t centers = codec_get_u32_in(&r, "center heuristic", 0, GENIE_LC_CENTERS_RANDOM);
    uint32_t flags = codec_get_u32_in(&r, "flags", 0, LC_FLAG_CENTER_DISTANCES);
    f->separator = (char)codec_get_u32_in(&r, "separator (a byte and 3 zero bytes)", 0, 255);
    f->n_objects = codec_get_u64_in(&r, "objects (the index's)", nObjects, nObjects);
    f->seed = codec_get_u64(&r, "seed");
    codec_get_u64_in(&r, "reserved", 0, 0);
    codec_get_u64_in(&r, "reserved", 0, 0);
    f->metric = (genie_lc_metric)metric;
    f->centers = (genie_lc_centers)centers;
    f->has_center_distances = (flags & LC_FLAG_CENTER_DISTANCES) != 0;
    if (nObjects == 0 || nObjects > UINT32_MAX)
        codec_fail(&r, "%llu objects, outside 1..%u", (unsigned long long)nObjects, UINT32_MAX);
    if (lc_metric_is_vector(f->metric) != (f->dim != 0))
        codec_fail(&r, "dim = %u does not suit metric %u", f->dim, metric);
    if (f->separator == '\n' || (f->metric != GENIE_LC_JACCARD && f->separator))
        codec_fail(&r, "separator byte %u does not suit metric %u", (unsigned char)f->separator, metric);
    GENIE_TRY(codec_end(&r));
    /* Bound every product by the section size before computing it, so
     * that no offset can overflow: each object takes at least 12 bytes
     * (a member's id and distance), the matrix 8 bytes per pair, a vector
     * 4 dim bytes. */
    uint64_t m = f->n_clusters, n = nObjects;
    if (n > nSection / 12)
        return bad("more objects than the section can hold (objects, bytes)", n, nSection);
    if (f->has_center_distances && m > 1 && m - 1 > 2 * (nSection / 8) / m)
        return bad("center distances larger than the section (clusters, bytes)", m, nSection);
    if (f->dim && (uint64_t)f->dim > nSection / 4 / n)
        return bad("vectors larger than the section (dim, bytes)", f->dim, nSection);
    lc_offsets o;
    offsets_of(nObjects, f->n_clusters, f->dim, f->has_center_distances, &o);
    if (o.total != nSection)
        return bad("section size differs from what the counts imply (bytes, expected)", nSection, o.total);
    L->aCenter = (const uint32_t *)(const void *)(p + o.center);
    L->aEnd = (const uint32_t *)(const void *)(p + o.end);
    L->aRadius = (const double *)(const void *)(p + o.radius);
    L->aOuter = (const double *)(const void *)(p + o.outer);
    L->aMember = (const uint32_t *)(const void *)(p + o.member);
    L->aMemberDist = (const double *)(const void *)(p + o.memberDist);
    L->aCenterDist = f->has_center_distances ? (const double *)(const void *)(p + o.centerDist) : NULL;
    L->aVec = f->dim ? (const float *)(const void *)(p + o.vec) : NULL;
    unsigned char *aSeen = calloc(1, (size_t)(n / 8 + 1));
    if (!aSeen)
        return util_error(GENIE_ENOMEM, "out of memory checking a metric index of %llu objects",
                          (unsigned long long)n);
    genie_status rc = check_clusters(L, aSeen);
    free(aSeen);
    return rc;
}

genie_status lc_open_index(const genie_index *idx, lc_layout *L, lc_space *s)
{
    memset(s, 0, sizeof *s);
    if (idx->info.type != GENIE_TYPE_METRIC)
        return util_error(GENIE_EINVAL, "not a metric index (type %s)", genie_index_type_name(idx->info.type));
    GENIE_TRY(lc_layout_decode(idx->aFrontend, idx->nFrontend, idx->info.n_objects, L));
    uint64_t n = L->info.n_objects;
    if (lc_metric_is_vector(L->info.metric)) {
        s->metric = L->info.metric;
        s->n = n;
        s->dim = L->info.dim;
        s->aVec = L->aVec;
        lc_space_init_slack(s);
        return GENIE_OK;
    }
    if (!idx->aRecordOffset)
        return util_error(GENIE_ECORRUPT, "metric index of %s has no stored objects",
                          genie_lc_metric_name(L->info.metric));
    const char **az = malloc(n * sizeof *az);
    size_t *an = malloc(n * sizeof *an);
    if (!az || !an) {
        free(az);
        free(an);
        return util_error(GENIE_ENOMEM, "out of memory opening a metric index of %llu objects",
                          (unsigned long long)n);
    }
    for (uint64_t i = 0; i < n; i++) {
        az[i] = idx->aRecordBytes + idx->aRecordOffset[i];
        an[i] = (size_t)(idx->aRecordOffset[i + 1] - idx->aRecordOffset[i]);
    }
    genie_status rc = lc_space_from_strings(s, L->info.metric, az, an, n, L->info.separator);
    s->azOwnStr = az;
    s->anOwnStr = an;
    if (rc != GENIE_OK)
        lc_space_free(s);
    return rc;
}

genie_status genie_lc_index_info(const genie_index *idx, genie_lc_info *out)
{
    util_error_clear();
    if (idx->info.type != GENIE_TYPE_METRIC)
        return util_error(GENIE_EINVAL, "not a metric index (type %s)", genie_index_type_name(idx->info.type));
    lc_layout L;
    GENIE_TRY(lc_layout_decode(idx->aFrontend, idx->nFrontend, idx->info.n_objects, &L));
    *out = L.info;
    return GENIE_OK;
}

static const char *const azMetric[] = {"l2", "l1", "cosine", "edit", "jaccard"};
static const char *const azCenters[] = {"farthest", "random"};

const char *genie_lc_metric_name(genie_lc_metric metric)
{
    return (unsigned)metric < sizeof azMetric / sizeof azMetric[0] ? azMetric[metric] : NULL;
}

genie_status genie_lc_metric_parse(const char *name, genie_lc_metric *out)
{
    for (unsigned i = 0; i < sizeof azMetric / sizeof azMetric[0]; i++)
        if (name && strcmp(name, azMetric[i]) == 0) {
            *out = (genie_lc_metric)i;
            return GENIE_OK;
        }
    return util_error(GENIE_EINVAL, "unknown metric '%s' (l2, l1, cosine, edit, jaccard)", name ? name : "");
}

const char *genie_lc_centers_name(genie_lc_centers centers)
{
    return (unsigned)centers < sizeof azCenters / sizeof azCenters[0] ? azCenters[centers] : NULL;
}

genie_status genie_lc_centers_parse(const char *name, genie_lc_centers *out)
{
    for (unsigned i = 0; i < sizeof azCenters / sizeof azCenters[0]; i++)
        if (name && strcmp(name, azCenters[i]) == 0) {
            *out = (genie_lc_centers)i;
            return GENIE_OK;
        }
    return util_error(GENIE_EINVAL, "unknown center heuristic '%s' (farthest, random)", name ? name : "");
}
