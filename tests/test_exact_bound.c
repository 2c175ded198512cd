/*
 * The exact search's candidate bound (engine/exact_bound.h) on the host:
 * the operand rounding, the bound against measured errors, and the whole
 * candidate step emulated in C with a pessimistic GEMM (sums in another
 * order, truncated adds for the tensor-core precisions), whose answers must
 * equal the direct loop's (exact_cpu_direct) bit for bit on data made of
 * ties, near-ties, duplicates and mixed scales.  The same header's
 * functions run in exact_gpu.cu and exact_select.cu; tests/gpu/gpu_exact.c
 * checks the GPU itself.  Also the precision option's names and refusals.
 */
#include <math.h>

#include "genie/vectors.h"
#include "engine/exact.h"
#include "engine/exact_bound.h"
#include "test.h"

#define EMU_MAX_CAND 2048u /* EXACT_CUDA_MAX_K: more candidates send a query to the direct path */

static double unit(uint64_t *s)
{
    return (double)(test_rand(s) >> 11) * 0x1p-53;
}

static float round_up(double x)
{
    float f = (float)x;
    return (double)f < x ? nextafterf(f, INFINITY) : f;
}

/* x rounded toward zero to float: the tensor cores' truncating adds. */
static float truncate_to_float(double x)
{
    float f = (float)x;
    return fabs((double)f) > fabs(x) ? nextafterf(f, 0.0f) : f;
}

/* What exact_prepare computes for one vector (rsqrtf replaced by 1 / sqrtf: the bound allows 2 ulp). */
typedef struct emu_vec {
    float nrm, w, rho, inv;
    float *op; /* dim operand values, scaled for fp16 */
} emu_vec;

static void emu_prepare(const float *x, uint32_t dim, genie_metric metric, genie_precision prec, emu_vec *e)
{
    float nrm = 0;
    for (uint32_t j = 0; j < dim; j++)
        nrm = fmaf(x[j], x[j], nrm);
    float r = metric == GENIE_METRIC_COSINE && nrm > 0 ? 1.0f / sqrtf(nrm) : 1.0f, scale = 1, inv = 1;
    if (prec == GENIE_PRECISION_FP16) {
        float m = 0;
        for (uint32_t j = 0; j < dim; j++)
            m = fmaxf(m, fabsf(x[j] * r));
        if (m > 0) {
            int ex;
            frexpf(m, &ex);
            scale = ldexpf(1, 15 - ex);
            inv = ldexpf(1, ex - 15);
        }
    }
    double rho2 = 0, v2 = 0, o2 = 0;
    for (uint32_t j = 0; j < dim; j++) {
        float v = x[j] * r, o = exact_round_operand(v * scale, prec);
        e->op[j] = o;
        double back = (double)o * inv, dv = (double)v - back;
        rho2 += dv * dv;
        v2 += (double)v * v;
        o2 += back * back;
    }
    e->nrm = nrm;
    e->w = round_up(sqrt(v2 > o2 ? v2 : o2) * (1 + 0x1p-30));
    e->rho = round_up(sqrt(rho2) * (1 + 0x1p-30));
    e->inv = inv;
}

/* A GEMM entry the pessimistic way: fp32 fused adds from the last dimension; else blocks of 4 exact products, truncated adds. */
static float emu_dot(const float *a, const float *b, uint32_t dim, genie_precision prec)
{
    if (prec == GENIE_PRECISION_FP32) {
        float s = 0;
        for (uint32_t j = dim; j-- > 0;)
            s = fmaf(a[j], b[j], s);
        return s;
    }
    float s = 0;
    for (uint32_t j0 = 0; j0 < dim; j0 += 4) {
        double blk = s;
        for (uint32_t j = j0; j < j0 + 4 && j < dim; j++)
            blk += (double)a[j] * b[j];
        s = truncate_to_float(blk);
    }
    return s;
}

static float emu_approx(genie_metric metric, float s, const emu_vec *x, const emu_vec *q)
{
    s = s * x->inv * q->inv;
    if (metric == GENIE_METRIC_L2)
        return fmaxf(x->nrm + q->nrm - 2.0f * s, 0.0f);
    return metric == GENIE_METRIC_IP ? -s : 1.0f - s;
}

/* The direct squared sum of l2 (the bound's reference before the root); else the distance itself. */
static float reference(genie_metric metric, const float *x, const float *q, uint32_t dim)
{
    if (metric != GENIE_METRIC_L2)
        return genie_vector_distance(metric, x, q, dim);
    float s = 0;
    for (uint32_t j = 0; j < dim; j++) {
        float d = x[j] - q[j];
        float p = d * d;
        s += p;
    }
    return s;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

typedef struct emu_stats {
    double worst;        /* largest |a - reference| / (e / 2) */
    uint64_t candidates; /* re-ranked, over the queries the bound served */
    uint64_t direct;     /* queries sent to the direct path */
} emu_stats;

/*
 * The candidate step of exact_select.cu for every query, emulated: upper and
 * lower bounds, U the k-th upper, the candidates re-ranked by the direct
 * distance, or the direct path past EMU_MAX_CAND candidates.
 */
static void emulate(const genie_vectors *base, const genie_vectors *q, genie_metric metric, genie_precision prec,
                    uint32_t k, genie_neighbor *out, emu_stats *st)
{
    uint32_t dim = base->dim;
    exact_bound b = exact_bound_make(metric, prec, dim);
    emu_vec *ax = calloc(base->n, sizeof *ax), eq;
    float *aOp = malloc((base->n + 1) * dim * sizeof *aOp), *upper = malloc(base->n * sizeof *upper);
    float *lower = malloc(base->n * sizeof *lower);
    uint64_t *key = malloc(base->n * sizeof *key);
    CHECK(ax && aOp && upper && lower && key);
    for (uint64_t i = 0; i < base->n; i++) {
        ax[i].op = aOp + i * dim;
        emu_prepare(base->data + i * dim, dim, metric, prec, &ax[i]);
    }
    eq.op = aOp + base->n * dim;
    for (uint64_t qi = 0; qi < q->n; qi++) {
        const float *pq = q->data + qi * dim;
        emu_prepare(pq, dim, metric, prec, &eq);
        float c = exact_bound_query_c(&b, eq.w);
        for (uint64_t i = 0; i < base->n; i++) {
            float a = emu_approx(metric, emu_dot(ax[i].op, eq.op, dim, prec), &ax[i], &eq);
            float e = exact_bound_pair(&b, c, ax[i].w, ax[i].rho, eq.w, eq.rho);
            double err = fabs((double)a - reference(metric, base->data + i * dim, pq, dim));
            if (err / (e / 2) > st->worst)
                st->worst = err / (e / 2);
            upper[i] = a + e;
            lower[i] = upper[i] - 2.0f * e; /* as exact_select computes it, from the stored upper */
            key[i] = (uint64_t)exact_key(upper[i]) << 32 | i;
        }
        qsort(key, base->n, sizeof *key, cmp_u64);
        float T = exact_bound_threshold(metric, exact_key_value((uint32_t)(key[k - 1] >> 32)));
        uint64_t nCand = 0;
        for (uint64_t i = 0; i < base->n; i++)
            if (lower[i] <= T)
                key[nCand++] = i;
        CHECK(nCand >= k);
        if (nCand > EMU_MAX_CAND) {
            st->direct++;
            nCand = base->n; /* the direct path: every base vector */
            for (uint64_t i = 0; i < nCand; i++)
                key[i] = i;
        } else {
            st->candidates += nCand;
        }
        for (uint64_t t = 0; t < nCand; t++) {
            uint32_t id = (uint32_t)key[t];
            key[t] = (uint64_t)exact_key(genie_vector_distance(metric, base->data + (uint64_t)id * dim, pq, dim)) << 32 |
                     id;
        }
        qsort(key, nCand, sizeof *key, cmp_u64);
        for (uint32_t r = 0; r < k; r++) {
            out[qi * k + r].id = (uint32_t)key[r];
            out[qi * k + r].distance = exact_key_value((uint32_t)(key[r] >> 32));
        }
    }
    free(ax);
    free(aOp);
    free(upper);
    free(lower);
    free(key);
}

enum { DATA_UNIFORM, DATA_SMALL_INTS, DATA_NEAR_TIES, DATA_PIXELS, DATA_SCALES, DATA_DUPLICATES };

static void make_data(int kind, uint64_t n, uint32_t dim, uint64_t *s, genie_vectors *v, const genie_vectors *like)
{
    v->n = n;
    v->dim = dim;
    v->data = malloc(n * dim * sizeof(float));
    CHECK(v->data != NULL);
    for (uint64_t i = 0; i < n; i++) {
        float *p = v->data + i * dim;
        double scale = kind == DATA_SCALES ? ldexp(1, (int)(test_rand(s) % 41) - 20) : 1;
        for (uint32_t j = 0; j < dim; j++) {
            switch (kind) {
            case DATA_SMALL_INTS: p[j] = (float)(test_rand(s) % 5); break;
            case DATA_PIXELS: p[j] = (float)(test_rand(s) % 256); break;
            /* One point and its neighbours a few ulps away: distances tie to rounding. */
            case DATA_NEAR_TIES: p[j] = (float)((0.5 + j * 0.01) * (1 + (double)(test_rand(s) % 9) * 0x1p-23)); break;
            case DATA_DUPLICATES: p[j] = (float)(j % 3); break;
            default: p[j] = (float)((2 * unit(s) - 1) * scale); break;
            }
        }
        if (like && (kind == DATA_PIXELS || kind == DATA_UNIFORM) && i % 2 == 0) /* queries equal to base vectors */
            memcpy(p, like->data + (test_rand(s) % like->n) * dim, dim * sizeof(float));
    }
    if (kind == DATA_DUPLICATES) /* a few distinct vectors among 2,600 copies of one */
        for (uint64_t i = 0; i < n; i += 97)
            v->data[i * dim] += 1;
}

static void bound_case(int kind, uint64_t nBase, uint64_t nQuery, uint32_t dim, uint32_t k, uint64_t seed,
                       int expectDirect)
{
    uint64_t s = seed;
    genie_vectors base, q;
    make_data(kind, nBase, dim, &s, &base, NULL);
    make_data(kind, nQuery, dim, &s, &q, &base);
    genie_neighbor *want = malloc(nQuery * k * sizeof *want), *got = malloc(nQuery * k * sizeof *got);
    CHECK(want && got);
    for (int m = 0; m <= GENIE_METRIC_COSINE; m++) {
        CHECK_OK(exact_cpu_direct(&base, &q, (genie_metric)m, k, 2, want));
        for (int p = 0; p <= GENIE_PRECISION_FP16; p++) {
            emu_stats st = {0, 0, 0};
            memset(got, 0xff, nQuery * k * sizeof *got);
            emulate(&base, &q, (genie_metric)m, (genie_precision)p, k, got, &st);
            if (st.worst > 1)
                test_fail_at(__FILE__, __LINE__, "data %d %s %s: an error %.3g times the bound", kind,
                             genie_metric_name((genie_metric)m), genie_precision_name((genie_precision)p), st.worst);
            for (uint64_t i = 0; i < nQuery * k; i++)
                if (got[i].id != want[i].id || exact_key(got[i].distance) != exact_key(want[i].distance))
                    test_fail_at(__FILE__, __LINE__, "data %d %s %s query %llu rank %llu: id %u %.9g, direct %u %.9g",
                                 kind, genie_metric_name((genie_metric)m), genie_precision_name((genie_precision)p),
                                 (unsigned long long)(i / k), (unsigned long long)(i % k), got[i].id,
                                 (double)got[i].distance, want[i].id, (double)want[i].distance);
            if (expectDirect)
                CHECK(st.direct > 0);
        }
    }
    free(want);
    free(got);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
}

TEST(exact_bound_operand_rounding)
{
    uint64_t s = 7;
    for (int i = 0; i < 200000; i++) {
        union {
            float f;
            uint32_t u;
        } v, r;
        v.u = (uint32_t)test_rand(&s);
        if (!isfinite(v.f) || fabsf(v.f) > 0x1p100f)
            continue;
        CHECK(exact_round_operand(v.f, GENIE_PRECISION_FP32) == v.f);
        r.f = exact_round_operand(v.f, GENIE_PRECISION_TF32);
        CHECK((r.u & 0x1fffu) == 0);
        if (r.f != 0)
            CHECK(fabs((double)r.f - v.f) <= 0x1p-11 * fabs((double)v.f));
        else
            CHECK(fabsf(v.f) < 0x1p-126f);
        float h = ldexpf(v.f, -60); /* into and below fp16's range */
        r.f = exact_round_operand(h, GENIE_PRECISION_FP16);
        CHECK((r.u & 0x1fffu) == 0);
        if (r.f != 0)
            CHECK(fabsf(r.f) >= 0x1p-14f && fabs((double)r.f - h) <= 0x1p-11 * fabs((double)h));
        else
            CHECK(fabsf(h) < 0x1p-14f);
    }
    /* Ties to even: 1 + 2^-11 (halfway) rounds down, 1 + 3 * 2^-11 up. */
    CHECK(exact_round_operand(1 + 0x1p-11f, GENIE_PRECISION_TF32) == 1.0f);
    CHECK(exact_round_operand(1 + 3 * 0x1p-11f, GENIE_PRECISION_TF32) == 1 + 0x1p-9f);
}

TEST(exact_bound_candidates_are_the_direct_answer)
{
    bound_case(DATA_UNIFORM, 1500, 40, 37, 10, 1, 0);
    bound_case(DATA_SMALL_INTS, 600, 30, 6, 25, 2, 0);
    bound_case(DATA_NEAR_TIES, 800, 20, 24, 50, 3, 0);
    bound_case(DATA_PIXELS, 700, 16, 784, 100, 4, 0);
    bound_case(DATA_SCALES, 1200, 30, 16, 10, 5, 0);
    bound_case(DATA_DUPLICATES, 2600, 4, 8, 10, 6, 1); /* > 2,048 tied candidates: the direct path */
}

/* The CPU backend (OpenBLAS's GEMM when present) gives the direct loop's answers, bit for bit. */
TEST(exact_cpu_search_is_the_direct_answer)
{
    static const struct {
        int kind;
        uint64_t nBase, nQuery;
        uint32_t dim, k;
    } aCase[] = {{DATA_UNIFORM, 3000, 50, 37, 10},    {DATA_SMALL_INTS, 900, 40, 6, 25},
                 {DATA_NEAR_TIES, 700, 20, 24, 50},   {DATA_PIXELS, 2500, 24, 784, 100},
                 {DATA_SCALES, 3000, 40, 16, 10},     {DATA_DUPLICATES, 2600, 6, 8, 10},
                 {DATA_UNIFORM, 40, 5, 7, 64}}; /* k above the base */
    uint64_t s = 21;
    for (size_t c = 0; c < sizeof aCase / sizeof *aCase; c++) {
        genie_vectors base, q;
        uint32_t k = aCase[c].k;
        make_data(aCase[c].kind, aCase[c].nBase, aCase[c].dim, &s, &base, NULL);
        make_data(aCase[c].kind, aCase[c].nQuery, aCase[c].dim, &s, &q, &base);
        size_t n = q.n * k;
        genie_neighbor *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
        CHECK(want && got);
        for (int m = 0; m <= GENIE_METRIC_COSINE; m++) {
            CHECK_OK(exact_cpu_direct(&base, &q, (genie_metric)m, k, 2, want));
            CHECK_OK(genie_exact_search(&base, &q, (genie_metric)m, k, GENIE_BACKEND_CPU, 2, got, NULL));
            for (size_t i = 0; i < n; i++)
                if (got[i].id != want[i].id || exact_key(got[i].distance) != exact_key(want[i].distance))
                    test_fail_at(__FILE__, __LINE__, "case %zu %s query %zu rank %zu: id %u %.9g, direct %u %.9g", c,
                                 genie_metric_name((genie_metric)m), i / k, i % k, got[i].id,
                                 (double)got[i].distance, want[i].id, (double)want[i].distance);
        }
        free(want);
        free(got);
        genie_vectors_free(&base);
        genie_vectors_free(&q);
    }
}

TEST(exact_precision_names_and_refusals)
{
    genie_precision p;
    for (int i = 0; i <= GENIE_PRECISION_FP16; i++) {
        CHECK_OK(genie_precision_parse(genie_precision_name((genie_precision)i), &p));
        CHECK_EQ(p, i);
    }
    CHECK_RC(genie_precision_parse("fp64", &p), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "fp32, tf32, fp16") != NULL);
    CHECK(genie_precision_name((genie_precision)9) == NULL);
    uint64_t s = 11;
    genie_vectors base, q;
    make_data(DATA_UNIFORM, 300, 9, &s, &base, NULL);
    make_data(DATA_UNIFORM, 7, 9, &s, &q, NULL);
    genie_neighbor *a = malloc(7 * 5 * sizeof *a), *b = malloc(7 * 5 * sizeof *b);
    CHECK(a && b);
    CHECK_RC(genie_exact_search_precision(&base, &q, GENIE_METRIC_L1, 5, GENIE_BACKEND_CPU, 1, GENIE_PRECISION_TF32, a,
                                          NULL),
             GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "l1 has none") != NULL);
    CHECK_RC(genie_exact_search_precision(&base, &q, GENIE_METRIC_L2, 5, GENIE_BACKEND_CPU, 1, (genie_precision)7, a,
                                          NULL),
             GENIE_EINVAL);
    /* The CPU ignores the precision: the same answers. */
    for (int m = 0; m <= GENIE_METRIC_L1; m++) {
        CHECK_OK(genie_exact_search(&base, &q, (genie_metric)m, 5, GENIE_BACKEND_CPU, 1, a, NULL));
        genie_precision pr = m == GENIE_METRIC_L1 ? GENIE_PRECISION_FP32 : GENIE_PRECISION_FP16;
        CHECK_OK(genie_exact_search_precision(&base, &q, (genie_metric)m, 5, GENIE_BACKEND_CPU, 1, pr, b, NULL));
        CHECK(memcmp(a, b, 7 * 5 * sizeof *a) == 0);
    }
    free(a);
    free(b);
    genie_vectors_free(&base);
    genie_vectors_free(&q);
}
