/*
 * Recall estimates: prediction, the choice of K for a target, the cache
 * kept with the open index and the side file INDEX.recall (recall.h says
 * what the estimate is; the types' samplers compute it, recall_sample.h).
 *
 * Side file, little-endian (docs/FORMAT.md):
 *
 *   off  size  field
 *     0     8  magic "GENIERCL"
 *     8     4  version (2; version 1, before the edit levels, is refused)
 *    12     4  index type (2 sets, 3 sequences, 5 vectors)
 *    16     8  the index file's size
 *    24     4  the index's header CRC32C (its bytes 84..87)
 *    28     4  pseudo-queries S, 1..min(n_objects, 65536)
 *    32     4  kMax, 1..255
 *    36     4  Kmax, the candidates searched, 1..n_objects
 *    40     4  curves C: sets 1; vectors 1, or 3 for l2 (radius = curve);
 *              sequences 1..4 (edit levels)
 *    44     4  signal depth: sequences with C > 1, the candidates of the
 *              level signal, 1..Kmax; otherwise 0
 *    48     4  seed of the sample
 *    52     4  0
 *    56   4*C  each curve's perturbation, per mille (0..1000; sequences:
 *              the edit rates, increasing)
 *  56+4C       C * S rows: u32 nTrue (<= kMax), u32 signal (per mille of
 *              the query's length, or 0xffffffff: none; 0 with depth 0),
 *              u32 n, then n entries (u32 position < Kmax, strictly
 *              increasing; u32 class < kMax)
 *   end-4   4  CRC32C of every byte before it
 *
 * Nothing is allocated by what the file claims before the bytes that
 * would hold it are known to exist: a row's entries are checked against
 * the bytes left first.
 */
#include "index/live.h"
#include "transform/recall.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "index/index.h"
#include "util/codec.h"
#include "util/crc32c.h"
#include "util/error.h"
#include "util/file.h"

#define RECALL_MAGIC "GENIERCL"
#define RECALL_VERSION 2u
#define RECALL_HEADER 56u

void recall_estimate_free(recall_estimate *e)
{
    if (!e)
        return;
    free(e->aTrue);
    free(e->aSignal);
    free(e->aStart);
    free(e->aEntry);
    memset(e, 0, sizeof *e);
}

static void estimate_free_void(void *p)
{
    recall_estimate_free(p);
    free(p);
}

genie_status recall_estimate_add(recall_estimate *e, uint32_t nTrue, uint32_t signal, const recall_entry *a,
                                 size_t n)
{
    size_t nRow = (size_t)e->nCurve * e->nSample;
    if (!e->aStart) {
        e->aTrue = calloc(nRow ? nRow : 1, sizeof *e->aTrue);
        e->aSignal = calloc(nRow ? nRow : 1, sizeof *e->aSignal);
        e->aStart = calloc(nRow + 1, sizeof *e->aStart);
        if (!e->aTrue || !e->aSignal || !e->aStart)
            return util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        e->nRow = 0;
        e->nEntry = 0;
    }
    if (e->nRow >= nRow)
        return util_error(GENIE_EINVAL, "recall estimate: more rows than %zu", nRow);
    if (e->nEntry + n > e->nEntryCap) {
        uint64_t cap = e->nEntryCap ? e->nEntryCap : 1024;
        while (cap < e->nEntry + n)
            cap *= 2;
        recall_entry *p = realloc(e->aEntry, (size_t)cap * sizeof *p);
        if (!p)
            return util_error(GENIE_ENOMEM, "out of memory for the recall estimate");
        e->aEntry = p;
        e->nEntryCap = cap;
    }
    if (n)
        memcpy(e->aEntry + e->nEntry, a, n * sizeof *a);
    e->nEntry += n;
    e->aTrue[e->nRow] = nTrue;
    e->aSignal[e->nRow] = signal;
    e->aStart[++e->nRow] = e->nEntry;
    return GENIE_OK;
}

/* ---------------------------------------------------------- prediction */

double recall_predict(const recall_estimate *e, uint32_t curve, uint32_t k, uint32_t K)
{
    double sum = 0;
    uint32_t nUsed = 0;
    if (K < k)
        K = k;
    for (uint32_t q = 0; q < e->nSample; q++) {
        size_t row = (size_t)curve * e->nSample + q;
        uint32_t nTrue = e->aTrue[row], want = k < nTrue ? k : nTrue;
        if (want == 0)
            continue;
        uint32_t nGood = 0;
        for (uint64_t j = e->aStart[row]; j < e->aStart[row + 1] && e->aEntry[j].pos < K; j++)
            nGood += e->aEntry[j].cls < k;
        sum += (double)(nGood < want ? nGood : want) / want;
        nUsed++;
    }
    return nUsed ? sum / nUsed : 1.0;
}

static double predict_mix(const recall_estimate *e, recall_mix m, uint32_t k, uint32_t K)
{
    double ra = recall_predict(e, m.a, k, K);
    return m.w > 0 ? (1 - m.w) * ra + m.w * recall_predict(e, m.b, k, K) : ra;
}

uint32_t recall_signal(uint32_t distance, size_t n)
{
    double v = 1000.0 * distance / (double)(n ? n : 1) + 0.5;
    return v < (double)(RECALL_NO_SIGNAL - 1) ? (uint32_t)v : RECALL_NO_SIGNAL - 1;
}

/* The mean level signal of curve @p c's pseudo-queries that have one (-1: none has). */
static double curve_signal(const recall_estimate *e, uint32_t c)
{
    double sum = 0;
    uint32_t n = 0;
    for (uint32_t q = 0; q < e->nSample; q++) {
        uint32_t v = e->aSignal[(size_t)c * e->nSample + q];
        if (v != RECALL_NO_SIGNAL) {
            sum += v;
            n++;
        }
    }
    return n ? sum / n : -1;
}

recall_mix recall_mix_for(const recall_estimate *e, double signal)
{
    uint32_t last = e->nCurve - 1;
    if (signal < 0 || e->signalDepth == 0)
        return (recall_mix){last, last, 0};
    double lo = curve_signal(e, 0);
    if (signal <= lo)
        return (recall_mix){0, 0, 0};
    for (uint32_t c = 0; c < last; c++) {
        double hi = curve_signal(e, c + 1);
        if (signal <= hi) {
            /* lo < signal <= hi; a curve with no signal at all (hi < 0) is not reached here */
            return hi > lo ? (recall_mix){c, c + 1, (signal - lo) / (hi - lo)} : (recall_mix){c + 1, c + 1, 0};
        }
        if (hi > lo)
            lo = hi;
    }
    return (recall_mix){last, last, 0};
}

genie_status recall_default_target(double *pTarget, double dflt)
{
    double t = *pTarget;
    if (t == 0)
        t = dflt;
    if (!(t >= 1e-6 && t <= 1))
        return util_error(GENIE_EINVAL, "default recall target %g: outside (0, 1] (at least 0.000001; 0 for %g)",
                          *pTarget, dflt);
    *pTarget = recall_from_millionths(recall_to_millionths(t), dflt);
    return GENIE_OK;
}

uint32_t recall_to_millionths(double target)
{
    return (uint32_t)llround(target * 1e6);
}

double recall_from_millionths(uint32_t v, double dflt)
{
    return v ? v / 1e6 : dflt;
}

genie_status recall_check_target(double target, uint32_t k, int exact, const char *zExplicit)
{
    if (target == 0)
        return GENIE_OK;
    if (!(target > 0 && target <= 1))
        return util_error(GENIE_EINVAL, "recall target %g: it must be a number in (0, 1]", target);
    if (exact)
        return util_error(GENIE_EINVAL, "a recall target and the exact mode exclude each other (exact has recall 1)");
    if (zExplicit)
        return util_error(GENIE_EINVAL, "a recall target chooses %s itself: give one or the other", zExplicit);
    if (k > RECALL_KMAX)
        return util_error(GENIE_EINVAL,
                          "k = %u with a recall target: at most %u (the estimate records each pseudo-query's %u "
                          "best answers)",
                          k, RECALL_KMAX, RECALL_KMAX);
    return GENIE_OK;
}

genie_status recall_plan_for(const genie_index *idx, uint32_t k, double target, double signal, unsigned threads,
                             recall_sampler_fn *xSample, recall_plan *out)
{
    const recall_estimate *e;
    GENIE_TRY(recall_get(idx, threads, xSample, 0, &e));
    memset(out, 0, sizeof *out);
    out->perturb = -1;
    if (k > e->kMax)
        return util_error(GENIE_EINVAL, "k = %u with a recall target: the estimate covers k <= %u", k, e->kMax);
    uint32_t lo0 = k < e->nCandMax ? k : e->nCandMax;
    /* Sequences: one mixture of the edit levels; vectors: each radius a candidate plan. */
    int levels = e->type == GENIE_TYPE_SEQUENCES;
    uint32_t nPlan = levels ? 1 : e->nCurve;
    int found = 0;
    for (uint32_t c = 0; c < nPlan; c++) {
        recall_mix m = levels ? recall_mix_for(e, signal) : (recall_mix){c, c, 0};
        if (levels)
            out->perturb = (1 - m.w) * e->aPerturb[m.a] + m.w * e->aPerturb[m.b];
        if (predict_mix(e, m, k, e->nCandMax) < target)
            continue;
        uint32_t lo = lo0, hi = e->nCandMax; /* recall(hi) >= target; find the smallest such */
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (predict_mix(e, m, k, mid) >= target)
                hi = mid;
            else
                lo = mid + 1;
        }
        uint32_t K = hi < k ? k : hi;
        if (found && K >= out->K)
            continue; /* a larger radius only pays with a smaller K */
        out->K = K;
        out->radius = levels ? 0 : c;
        out->recall = predict_mix(e, m, k, K);
        found = 1;
    }
    if (found)
        return GENIE_OK;
    out->exact = 1;
    out->recall = 1;
    return GENIE_OK;
}

/* ------------------------------------------------------------ the file */

static genie_status side_path(const genie_index *idx, char **pz)
{
    if (!idx->zPath)
        return util_error(GENIE_EINVAL, "the index was not opened from a file: no place for its recall estimate");
    size_t n = strlen(idx->zPath);
    char *z = malloc(n + sizeof ".recall");
    if (!z)
        return util_error(GENIE_ENOMEM, "out of memory");
    memcpy(z, idx->zPath, n);
    memcpy(z + n, ".recall", sizeof ".recall");
    *pz = z;
    return GENIE_OK;
}

static uint32_t index_header_crc(const genie_index *idx)
{
    uint32_t v = 0;
    if (idx->map.n >= 88)
        memcpy(&v, idx->map.p + 84, 4); /* little-endian hosts only, as the index itself */
    return v;
}

genie_status recall_encode(const recall_estimate *e, unsigned char **paOut, size_t *pnOut)
{
    codec_writer w;
    codec_writer_init(&w);
    codec_put_bytes(&w, RECALL_MAGIC, 8);
    codec_put_u32(&w, RECALL_VERSION);
    codec_put_u32(&w, e->type);
    codec_put_u64(&w, e->indexSize);
    codec_put_u32(&w, e->indexCrc);
    codec_put_u32(&w, e->nSample);
    codec_put_u32(&w, e->kMax);
    codec_put_u32(&w, e->nCandMax);
    codec_put_u32(&w, e->nCurve);
    codec_put_u32(&w, e->signalDepth);
    codec_put_u32(&w, e->seed);
    codec_put_u32(&w, 0);
    for (uint32_t c = 0; c < e->nCurve; c++)
        codec_put_u32(&w, e->aPerturb[c]);
    for (size_t r = 0; r < (size_t)e->nCurve * e->nSample; r++) {
        codec_put_u32(&w, e->aTrue[r]);
        codec_put_u32(&w, e->aSignal[r]);
        codec_put_u32(&w, (uint32_t)(e->aStart[r + 1] - e->aStart[r]));
        for (uint64_t j = e->aStart[r]; j < e->aStart[r + 1]; j++) {
            codec_put_u32(&w, e->aEntry[j].pos);
            codec_put_u32(&w, e->aEntry[j].cls);
        }
    }
    codec_put_u32(&w, 0); /* room for the checksum */
    GENIE_TRY(codec_writer_finish(&w, paOut, pnOut, "recall estimate"));
    uint32_t crc = util_crc32c(0, *paOut, *pnOut - 4);
    unsigned char *p = *paOut + *pnOut - 4;
    p[0] = (unsigned char)crc;
    p[1] = (unsigned char)(crc >> 8);
    p[2] = (unsigned char)(crc >> 16);
    p[3] = (unsigned char)(crc >> 24);
    return GENIE_OK;
}

genie_status recall_decode(const genie_index *idx, const unsigned char *a, size_t n, const char *zName,
                           recall_estimate *e)
{
    memset(e, 0, sizeof *e);
    if (n < RECALL_HEADER + 4 || memcmp(a, RECALL_MAGIC, 8) != 0)
        return util_error(GENIE_EFORMAT, "%s: not a genie recall estimate (%zu bytes, no GENIERCL magic)", zName, n);
    uint32_t crc = (uint32_t)a[n - 4] | (uint32_t)a[n - 3] << 8 | (uint32_t)a[n - 2] << 16 | (uint32_t)a[n - 1] << 24;
    if (util_crc32c(0, a, n - 4) != crc)
        return util_error(GENIE_ECORRUPT, "%s: checksum mismatch (the file is damaged)", zName);
    codec_reader r;
    codec_reader_init(&r, a + 8, n - 12, zName);
    uint32_t v = codec_get_u32(&r, "version");
    if (r.rc == GENIE_OK && v != RECALL_VERSION)
        return util_error(GENIE_EFORMAT,
                          "%s: version %u; this library reads %u (a cache: genie build, genie_recall_prepare() "
                          "or a search with a recall target writes it again)",
                          zName, v, RECALL_VERSION);
    e->type = codec_get_u32(&r, "index type");
    e->indexSize = codec_get_u64(&r, "index size");
    e->indexCrc = codec_get_u32(&r, "index header checksum");
    if (r.rc == GENIE_OK && (e->type != (uint32_t)idx->info.type || e->indexSize != idx->map.n ||
                             e->indexCrc != index_header_crc(idx)))
        return util_error(GENIE_EFORMAT,
                          "%s belongs to another index (type %u, %llu bytes, header checksum %08x; this one: "
                          "type %u, %llu bytes, %08x): rebuilt since?",
                          zName, e->type, (unsigned long long)e->indexSize, e->indexCrc, (unsigned)idx->info.type,
                          (unsigned long long)idx->map.n, index_header_crc(idx));
    uint64_t nObj = idx->info.n_objects;
    e->nSample = codec_get_u32_in(&r, "pseudo-queries", 1, nObj < 65536 ? (uint32_t)(nObj ? nObj : 1) : 65536);
    e->kMax = codec_get_u32_in(&r, "kMax", 1, 255);
    e->nCandMax = codec_get_u32_in(&r, "Kmax", 1, nObj < UINT32_MAX ? (uint32_t)(nObj ? nObj : 1) : UINT32_MAX);
    int levels = e->type == GENIE_TYPE_SEQUENCES;
    uint32_t nCurveMax = levels ? RECALL_EDIT_LEVELS : e->type == GENIE_TYPE_VECTORS ? RECALL_RADIUS_MAX + 1 : 1;
    e->nCurve = codec_get_u32_in(&r, "curves", 1, nCurveMax);
    uint32_t depthMax = levels && r.rc == GENIE_OK && e->nCurve > 1 ? e->nCandMax : 0;
    e->signalDepth = codec_get_u32_in(&r, "signal depth", depthMax ? 1 : 0, depthMax);
    e->seed = codec_get_u32(&r, "seed");
    codec_get_u32_in(&r, "reserved", 0, 0);
    for (uint32_t c = 0; c < e->nCurve && r.rc == GENIE_OK; c++)
        e->aPerturb[c] = codec_get_u32_in(&r, "perturbation", levels && c ? e->aPerturb[c - 1] + 1 : 0, 1000);
    if (r.rc != GENIE_OK)
        return r.rc;
    size_t nRow = (size_t)e->nCurve * e->nSample;
    /* Each row takes at least 12 bytes: check before allocating by the counts. */
    if (codec_left(&r) / 12 < nRow)
        return util_error(GENIE_ECORRUPT, "%s: %zu rows claimed, %zu bytes left", zName, nRow, codec_left(&r));
    genie_status rc = GENIE_OK;
    recall_entry *aRow = NULL;
    size_t nRowCap = 0;
    for (size_t row = 0; row < nRow && rc == GENIE_OK; row++) {
        uint32_t nTrue = codec_get_u32_in(&r, "nTrue", 0, e->kMax);
        uint32_t signal = e->signalDepth ? codec_get_u32(&r, "signal") : codec_get_u32_in(&r, "signal", 0, 0);
        uint32_t nE = codec_get_u32_in(&r, "entries", 0, e->nCandMax);
        if (r.rc != GENIE_OK) {
            rc = r.rc;
            break;
        }
        if (codec_left(&r) / 8 < nE) {
            rc = util_error(GENIE_ECORRUPT, "%s: row %zu claims %u entries, %zu bytes left", zName, row, nE,
                            codec_left(&r));
            break;
        }
        if (nE > nRowCap) {
            recall_entry *p = realloc(aRow, nE * sizeof *p);
            if (!p) {
                rc = util_error(GENIE_ENOMEM, "out of memory reading %s", zName);
                break;
            }
            aRow = p;
            nRowCap = nE;
        }
        for (uint32_t j = 0; j < nE && r.rc == GENIE_OK; j++) {
            aRow[j].pos = codec_get_u32_in(&r, "position", j ? aRow[j - 1].pos + 1 : 0, e->nCandMax - 1);
            aRow[j].cls = codec_get_u32_in(&r, "class", 0, e->kMax - 1);
        }
        rc = r.rc != GENIE_OK ? r.rc : recall_estimate_add(e, nTrue, signal, aRow, nE);
    }
    free(aRow);
    if (rc == GENIE_OK)
        rc = codec_end(&r);
    if (rc != GENIE_OK)
        recall_estimate_free(e);
    return rc;
}

static genie_status load_side_file(const genie_index *idx, const char *zPath, recall_estimate *e, int *pFound)
{
    *pFound = 0;
    FILE *f = fopen(zPath, "rb");
    if (!f)
        return GENIE_OK;
    *pFound = 1;
    genie_status rc = GENIE_OK;
    unsigned char *a = NULL;
    long n = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
        rc = util_error(GENIE_EIO, "%s: cannot read its size", zPath);
        goto done;
    }
    if (!(a = malloc(n ? (size_t)n : 1))) {
        rc = util_error(GENIE_ENOMEM, "out of memory reading %s (%ld bytes)", zPath, n);
        goto done;
    }
    if (fread(a, 1, (size_t)n, f) != (size_t)n) {
        rc = util_error(GENIE_EIO, "%s: short read", zPath);
        goto done;
    }
    rc = recall_decode(idx, a, (size_t)n, zPath, e);
done:
    free(a);
    fclose(f);
    return rc;
}

/* Replace the side file at @p zPath with @p e (a temporary file renamed over it: never a torn one). */
static genie_status write_side_file(const recall_estimate *e, const char *zPath)
{
    unsigned char *a = NULL;
    size_t n = 0;
    util_atomic_file af;
    genie_status rc = recall_encode(e, &a, &n);
    if (rc == GENIE_OK && (rc = util_atomic_open(&af, zPath)) == GENIE_OK) {
        if ((rc = util_atomic_write(&af, a, n)) != GENIE_OK || (rc = util_atomic_commit(&af)) != GENIE_OK)
            util_atomic_abort(&af);
    }
    free(a);
    return rc;
}

genie_status recall_at_hand(const genie_index *idx, unsigned threads, const recall_estimate **out)
{
    *out = NULL;
    if (!idx->pDerived || live_active(idx))
        return GENIE_OK;
    genie_status rc = recall_get(idx, threads, NULL, 0, out);
    if (rc == GENIE_EFORMAT || rc == GENIE_ECORRUPT) { /* another index's, or damaged: not this one's estimate */
        *out = NULL;
        util_error_clear();
        return GENIE_OK;
    }
    return rc;
}

genie_status recall_get(const genie_index *idx, unsigned threads, recall_sampler_fn *xSample, int mustWrite,
                        const recall_estimate **out)
{
    *out = NULL;
    if (idx->info.type != GENIE_TYPE_SETS && idx->info.type != GENIE_TYPE_SEQUENCES &&
        idx->info.type != GENIE_TYPE_VECTORS)
        return util_error(GENIE_EINVAL, "a %s index has no recall estimate (sets, sequences and vectors do)",
                          genie_index_type_name(idx->info.type));
    if (!idx->pDerived)
        return util_error(GENIE_EINVAL, "the index was not opened from a file: no recall estimate");
    if (live_active(idx))
        return util_error(GENIE_EINVAL, "the recall estimate is of the index file, and its log has writes since: "
                                        "compact the index (genie compact) first");
    index_derived *d = idx->pDerived;
    char *zPath = NULL;
    recall_estimate *e = NULL;
    genie_status rc = GENIE_OK;
    static const char owner; /* the estimate's slot (index/index.h) */
    pthread_mutex_lock(&d->lock);
    index_slot *s = index_slot_claim(d->aSlot, &owner);
    if (!s) {
        rc = util_error(GENIE_ENOMEM, "every one of the index's %d derived slots is taken", INDEX_SLOTS);
        goto done;
    }
    if (s->p) {
        *out = s->p;
        goto done;
    }
    GENIE_TRY_GOTO(rc, side_path(idx, &zPath), done);
    if (!(e = calloc(1, sizeof *e))) {
        rc = util_error(GENIE_ENOMEM, "out of memory");
        goto done;
    }
    int found;
    rc = load_side_file(idx, zPath, e, &found);
    if (rc == GENIE_OK && found) {
        s->p = e;
        s->xFree = estimate_free_void;
        *out = e;
        e = NULL;
        goto done;
    }
    if (!xSample)
        goto done; /* absent: OK and NULL; damaged or another index's: the error */
    /* Computing replaces a missing, stale or damaged side file. */
    util_error_clear();
    GENIE_TRY_GOTO(rc, xSample(idx, threads, e), done);
    e->indexSize = idx->map.n;
    e->indexCrc = index_header_crc(idx);
    rc = write_side_file(e, zPath);
    if (rc != GENIE_OK && mustWrite)
        goto done;
    /* A cache that cannot be written (read-only folder) is no search's error: the estimate stays in memory. */
    rc = GENIE_OK;
    util_error_clear();
    s->p = e;
    s->xFree = estimate_free_void;
    *out = e;
    e = NULL;
done:
    pthread_mutex_unlock(&d->lock);
    if (e)
        estimate_free_void(e);
    free(zPath);
    return rc;
}

/* ---------------------------------------------------------- public API */

genie_status genie_recall_predict(const genie_index *idx, uint32_t k, uint32_t candidates, uint32_t curve,
                                  double *recall, uint32_t *sample)
{
    util_error_clear();
    *recall = -1;
    if (sample)
        *sample = 0;
    if (k == 0 || k > RECALL_KMAX)
        return util_error(GENIE_EINVAL, "k = %u: the recall estimate covers k = 1..%u", k, RECALL_KMAX);
    const recall_estimate *e;
    GENIE_TRY(recall_get(idx, 0, NULL, 0, &e));
    if (!e)
        return GENIE_OK;
    if (curve >= e->nCurve)
        return util_error(GENIE_EINVAL, "curve %u (a radius of l2 vectors, an edit level of sequences): the "
                                        "estimate covers 0..%u", curve, e->nCurve - 1);
    if (k > e->kMax)
        return util_error(GENIE_EINVAL, "k = %u: the estimate covers k <= %u", k, e->kMax);
    *recall = recall_predict(e, curve, k, candidates);
    if (sample)
        *sample = e->nSample;
    return GENIE_OK;
}
