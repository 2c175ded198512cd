/*
 * GENIE's Count Priority Queue on the GPU (Zhou et al. (GENIE) III-C), the paper's
 * fine-grained layout: one thread block per work unit (a query item, or
 * with load balance at most two sublists), threads striding the postings.
 *
 * Per query, in the batch scratch (all zeroed before the batch):
 *   Bitmap Counter  n objects * (1 << log2Bits) bits, the fewest power-of-
 *                   two bits that hold the query's count bound; increments
 *                   are atomicAdd(w << shift) on the 32-bit word holding the
 *                   field.  Since no count exceeds the bound, no carry ever
 *                   leaves a field (never spills into a neighbour).
 *   ZipperArray     bound + 2 counters; ZA[v] counts objects credited at
 *                   value v.  An increment from c to c + w credits every v
 *                   in (c, c + w] with v >= the AuditThreshold seen then
 *                   (Algorithm 1 generalised to weights).  A credit is a
 *                   range, so it is kept exactly in a difference array
 *                   ZD (bound + 2 more counters: +1 at its first value,
 *                   -1 after its last; two atomics whatever w is), and ZA
 *                   itself only receives the first GATE_WINDOW values of
 *                   each range: a lower bound of the credits, which is all
 *                   the runtime AT advance needs (it may lag, never run
 *                   ahead).  Crediting all w values one by one cost up to
 *                   255 contended atomics per increment (a 120 s case).
 *   AuditThreshold  kept as AT - 1 in cuda_query_info.atMinus1 (zero start);
 *                   advanced while ZA[AT] >= k, by atomicMax.
 *   Hash Table      power-of-two slots of (id << 32 | count), count 0 =
 *                   empty; modified Robin Hood (III-C2): an insert probes
 *                   with an age, steals the slot of a resident younger than
 *                   itself and carries the resident on, and overwrites any
 *                   entry whose count fell below AT - 1 (it can no longer be
 *                   a top-k candidate).  More than 4 * slots steps: the
 *                   query is marked overflowed and the driver reruns it
 *                   with twice the slots.
 *
 * Why the answer is exact (the proof is in docs/CUDA.md):
 *   - AT only grows past v once ZA[v] >= k, so runtime AT <= MC_k + 1;
 *   - after counting, AT* = the least v >= AT with prefix-sum(ZD)[v] < k;
 *     for v >= AT every crossing of v was credited, so that sum is
 *     #objects with count >= v: < k at AT*, >= k at AT* - 1: MC_k = AT* - 1;
 *   - an object whose final count c >= AT* was inserted with value c at its
 *     last increment and never expires; an HT entry is taken iff its value
 *     is >= AT* and equals the object's Bitmap Counter (which drops stale
 *     copies that concurrent displacement may leave);
 *   - ties at MC_k come from one ordered scan of the Bitmap Counter that
 *     stops at the (k - taken)-th tie: the smallest ids, as the CPU gives.
 */
#include "engine/cuda/count/topk_device.cuh"
#include "engine/cuda/common/cuda_entry.h"

/* Probe budget of one insert, in slot visits and lost races, per slot. */
#define HT_STEPS_PER_SLOT 4u
/* ZipperArray values credited one by one per increment (the rest only in ZD). */
#define GATE_WINDOW 8u
/* The count bound beyond which a query's ZipperArray is not worth building. */
#define CPQ_MAX_BOUND (1u << 28)

typedef struct cpq_query {
    uint64_t iBcWord;  /* the query's Bitmap Counter: d_bc + iBcWord */
    uint64_t nBcWord;  /* multiple of TIE_WORDS */
    uint64_t iZa;      /* its ZipperArray: d_za + iZa, bound + 2 entries, then ZD (as many) */
    uint64_t iSlot;    /* its hash table: d_ht + iSlot */
    uint32_t slotMask; /* slots - 1 */
    uint32_t bound;
    uint32_t threshold;
    uint32_t log2Bits;
} cpq_query;

typedef struct cpq_args {
    const uint32_t *d_aPosting;
    const uint32_t *d_aAllow; /* allowed objects (cuda_batch.d_aAllow), or NULL: others are not counted */
    const cuda_unit *d_aUnit;
    const cpq_query *d_aQuery;
    cuda_query_info *d_aInfo;
    uint32_t *d_bc;
    uint32_t *d_za;
    unsigned long long *d_ht;
    genie_hit *d_aHit;
    uint32_t k;
} cpq_args;

__device__ static inline uint32_t ht_home(uint32_t key, uint32_t mask)
{
    uint32_t h = key * 0x9e3779b1u;
    return (h ^ (h >> 15)) & mask;
}

/*
 * Insert or raise (key, val) in the query's table.  Any thread, any time;
 * lock-free: a slot changes only by a 64-bit atomicCAS from the value just
 * read.  @p at is an AuditThreshold this thread has seen (never above the
 * current one), so what it calls expired really is.
 */
__device__ static void ht_insert(unsigned long long *ht, uint32_t mask, uint32_t key, uint32_t val, uint32_t at,
                                 uint32_t *pOverflow)
{
    unsigned long long carry = (unsigned long long)key << 32 | val;
    uint32_t pos = ht_home(key, mask), age = 0;
    uint32_t nStep = HT_STEPS_PER_SLOT * (mask + 1u);
    for (uint32_t step = 0; step < nStep && age <= mask; step++) {
        uint32_t ck = (uint32_t)(carry >> 32), cv = (uint32_t)carry;
        if (cv + 1u < at)
            return; /* a carried resident expired meanwhile: drop it */
        unsigned long long s = *(volatile unsigned long long *)&ht[pos];
        uint32_t sk = (uint32_t)(s >> 32), sv = (uint32_t)s;
        if (sv != 0 && sv + 1u >= at && sk != ck) {
            uint32_t sAge = (pos - ht_home(sk, mask)) & mask;
            if (sAge >= age) {
                pos = (pos + 1u) & mask;
                age++;
            } else if (atomicCAS(&ht[pos], s, carry) == s) {
                /* Robin Hood: we took a younger resident's slot; place it further on. */
                carry = s;
                age = sAge + 1u;
                pos = (pos + 1u) & mask;
            }
            continue;
        }
        if (sv != 0 && sv + 1u >= at && sv >= cv)
            return; /* same key, already as high */
        if (atomicCAS(&ht[pos], s, carry) == s)
            return; /* empty, expired, or the same key raised */
    }
    atomicExch(pOverflow, 1u);
}

/*
 * The Gate for one increment of object o from count c0 to c1 >= AT
 * (Algorithm 1, lines 5-9, weight-generalised).
 */
__device__ static void gate_pass(const cpq_args &a, const cpq_query &q, uint32_t iQuery, uint32_t o, uint32_t c0,
                                 uint32_t c1, uint32_t at)
{
    uint32_t *za = a.d_za + q.iZa, *zd = za + q.bound + 2u;
    cuda_query_info *info = &a.d_aInfo[iQuery];
    uint32_t lo = max(c0 + 1u, at);
    atomicAdd(&zd[lo], 1u);
    atomicAdd(&zd[c1 + 1u], 0xffffffffu); /* -1; c1 + 1 <= bound + 1 */
    for (uint32_t v = lo; v <= c1 && v < lo + GATE_WINDOW; v++)
        atomicAdd(&za[v], 1u);
    ht_insert(a.d_ht + q.iSlot, q.slotMask, o, c1, at, &info->overflow);
    volatile uint32_t *vza = za;
    uint32_t v = *(volatile uint32_t *)&info->atMinus1 + 1u;
    while (v <= q.bound && vza[v] >= a.k) {
        atomicMax(&info->atMinus1, v); /* AT = v + 1: every ZA below it holds >= k */
        v++;
    }
}

/*
 * One block per unit; thread t takes postings t, t + CUDA_BLOCK, ... of the
 * unit's slice (coalesced).  No shared memory, no barriers: threads meet
 * only through global atomics on the query's counter, gate and table.
 */
__global__ void __launch_bounds__(CUDA_BLOCK) cpq_count_kernel(cpq_args a)
{
    cuda_unit u = a.d_aUnit[blockIdx.x];
    uint32_t iQuery = u.uQueryWeight >> 8, w = u.uQueryWeight & 255u;
    cpq_query q = a.d_aQuery[iQuery];
    uint32_t *bc = a.d_bc + q.iBcWord;
    uint32_t perWordLog2 = 5u - q.log2Bits;
    uint32_t mask = q.log2Bits == 5u ? 0xffffffffu : (1u << (1u << q.log2Bits)) - 1u;
    const volatile uint32_t *pAtMinus1 = &a.d_aInfo[iQuery].atMinus1;
    uint32_t at = *pAtMinus1 + 1u;
    const uint32_t *post = a.d_aPosting + u.iBegin;
    for (uint32_t p = threadIdx.x; p < u.nPosting; p += CUDA_BLOCK) {
        uint32_t o = __ldg(post + p);
        if (a.d_aAllow && !((__ldg(a.d_aAllow + (o >> 5)) >> (o & 31u)) & 1u))
            continue; /* not allowed: never counted, so it never passes the Gate */
        uint32_t shift = (o & ((1u << perWordLog2) - 1u)) << q.log2Bits;
        uint32_t c0 = (atomicAdd(&bc[o >> perWordLog2], w << shift) >> shift) & mask;
        uint32_t c1 = c0 + w;
        if (c1 >= at) {
            at = *pAtMinus1 + 1u;
            if (c1 >= at)
                gate_pass(a, q, iQuery, o, c0, c1, at);
        }
    }
}

/*
 * AT* = the least v >= at with sum(zd[0..v]) < k (exists: the sum is 0 at
 * bound + 1).  All CUDA_BLOCK threads; same result in all.
 */
__device__ static uint32_t cpq_final_at(const uint32_t *zd, uint32_t at, uint32_t bound, uint32_t k)
{
    __shared__ uint32_t s_found;
    uint32_t part = 0, prefix, total;
    for (uint32_t v = threadIdx.x; v < at; v += CUDA_BLOCK)
        part += zd[v];
    block_exclusive_sum(part, &prefix);
    if (threadIdx.x == 0)
        s_found = 0xffffffffu;
    for (uint32_t base = at;; base += CUDA_BLOCK) {
        uint32_t v = base + threadIdx.x, x = v <= bound + 1u ? zd[v] : 0u;
        uint32_t sum = prefix + block_exclusive_sum(x, &total) + x; /* its barriers publish s_found */
        if (v <= bound + 1u && sum < k)
            atomicMin(&s_found, v);
        __syncthreads();
        if (s_found != 0xffffffffu)
            break;
        prefix += total;
    }
    uint32_t r = s_found;
    __syncthreads();
    return r;
}

/*
 * One block per query: AT*, one scan of the hash table (Theorem III.1) for
 * the hits above the k-th count, their sort, then the ties in id order.
 */
__global__ void __launch_bounds__(CUDA_BLOCK) cpq_finish_kernel(cpq_args a)
{
    __shared__ uint32_t s_nAbove;
    uint32_t iQuery = blockIdx.x;
    cpq_query q = a.d_aQuery[iQuery];
    cuda_query_info *info = &a.d_aInfo[iQuery];
    if (info->overflow)
        return; /* rerun by the driver with a larger table */
    const uint32_t *za = a.d_za + q.iZa;
    const uint32_t *bc = a.d_bc + q.iBcWord;
    const unsigned long long *ht = a.d_ht + q.iSlot;
    genie_hit *out = a.d_aHit + (uint64_t)iQuery * a.k;
    uint32_t at = cpq_final_at(za + q.bound + 2u, info->atMinus1 + 1u, q.bound, a.k), kth = at - 1u;
    if (threadIdx.x == 0)
        s_nAbove = 0;
    __syncthreads();
    uint32_t lo = max(at, q.threshold);
    for (uint32_t i = threadIdx.x; i <= q.slotMask; i += CUDA_BLOCK) {
        unsigned long long s = ht[i];
        uint32_t key = (uint32_t)(s >> 32), val = (uint32_t)s;
        if (val >= lo && val == counter_get(bc, key, q.log2Bits)) {
            uint32_t pos = atomicAdd(&s_nAbove, 1u);
            if (pos < a.k)
                out[pos] = genie_hit{key, val};
        }
    }
    __syncthreads();
    topk_finish_row(out, s_nAbove, a.k, bc, q.nBcWord, q.log2Bits, kth, q.threshold, info);
}

static uint32_t counter_log2_bits(uint32_t bound)
{
    uint32_t l = 0;
    while (l < 5 && ((1ull << (1u << l)) - 1) < bound)
        l++;
    return l;
}

#ifdef GENIE_TESTING
#include "engine/cuda/common/cuda_testing.h"

/* Tests force tiny tables through cpq_testing_set_slots() to exercise reruns. */
static uint64_t gTestingSlots;

extern "C" void cpq_testing_set_slots(uint64_t nSlot)
{
    gTestingSlots = nSlot;
}
#else
#define gTestingSlots 0 /* a release build sizes every table by Theorem III.1 */
#endif

/*
 * Hash-table slots: Theorem III.1 bounds live entries by about 2k plus the
 * inserts in flight.  Each rerun after an overflow quadruples the table.
 */
static uint64_t cpq_slots(const engine_request *req, unsigned shift)
{
    uint64_t want = gTestingSlots && shift == 0 ? gTestingSlots : 4ull * req->k + 2048, s = 1;
    while (s < want)
        s <<= 1;
    return s << (2 * shift);
}

typedef struct cpq_layout {
    uint64_t nBcWord, nZa, nSlot;
    uint32_t log2Bits;
} cpq_layout;

static void cpq_lay_out(const engine_request *req, size_t i, unsigned shift, cpq_layout *l)
{
    uint32_t bound = req->aCountBound[i];
    l->log2Bits = counter_log2_bits(bound);
    uint64_t perWord = 32u >> l->log2Bits;
    uint64_t nWord = (req->idx->info.n_objects + perWord - 1) / perWord;
    l->nBcWord = (nWord + TIE_WORDS - 1) / TIE_WORDS * TIE_WORDS;
    l->nZa = 2 * ((uint64_t)bound + 2); /* ZA, then ZD */
    l->nSlot = cpq_slots(req, shift);
}

static uint64_t cpq_query_bytes(const engine_request *req, size_t i, unsigned shift)
{
    if (req->aCountBound[i] > CPQ_MAX_BOUND || shift > 10)
        return UINT64_MAX;
    cpq_layout l;
    cpq_lay_out(req, i, shift, &l);
    return cuda_align(l.nBcWord * 4) + cuda_align(l.nZa * 4) + cuda_align(l.nSlot * 8) + sizeof(cpq_query);
}

static genie_status cpq_run(const cuda_batch *b)
{
    const engine_request *req = b->req;
    cpq_query *h_aQuery = (cpq_query *)malloc(b->nQuery * sizeof *h_aQuery);
    if (!h_aQuery)
        return util_error(GENIE_ENOMEM, "out of host memory for %u c-PQ query descriptors", b->nQuery);
    /* Scratch: [descriptors | all Bitmap Counters | all ZipperArrays | all tables]. */
    uint64_t nBc = 0, nZa = 0, nSlot = 0;
    for (uint32_t j = 0; j < b->nQuery; j++) {
        uint32_t i = b->aQuery[j];
        cpq_layout l;
        cpq_lay_out(req, i, b->aShift[i], &l);
        h_aQuery[j].iBcWord = nBc;
        h_aQuery[j].nBcWord = l.nBcWord;
        h_aQuery[j].iZa = nZa;
        h_aQuery[j].iSlot = nSlot;
        h_aQuery[j].slotMask = (uint32_t)(l.nSlot - 1);
        h_aQuery[j].bound = req->aCountBound[i];
        h_aQuery[j].threshold = engine_query_threshold(req->q, req->first + i);
        h_aQuery[j].log2Bits = l.log2Bits;
        nBc += cuda_align(l.nBcWord * 4) / 4;
        nZa += cuda_align(l.nZa * 4) / 4;
        nSlot += cuda_align(l.nSlot * 8) / 8;
    }
    char *p = (char *)b->d_scratch;
    cpq_args a;
    a.d_aPosting = b->d_aPosting;
    a.d_aAllow = b->d_aAllow;
    a.d_aUnit = b->d_aUnit;
    a.d_aQuery = (const cpq_query *)p;
    p += cuda_align((uint64_t)b->nQuery * sizeof(cpq_query));
    a.d_bc = (uint32_t *)p;
    p += nBc * 4;
    a.d_za = (uint32_t *)p;
    p += nZa * 4;
    a.d_ht = (unsigned long long *)p;
    a.d_aInfo = b->d_aInfo;
    a.d_aHit = b->d_aHit;
    a.k = req->k;
    genie_status rc = topk_count_then_finish(b, cpq_count_kernel, "launch of cpq_count_kernel", cpq_finish_kernel,
                                             "launch of cpq_finish_kernel", a, h_aQuery, (void *)a.d_aQuery,
                                             b->nQuery * sizeof(cpq_query));
    free(h_aQuery);
    return rc;
}

static const cuda_method cpq_method = {"c-PQ", 0, 1, 1, cpq_query_bytes, cpq_run};

extern "C" genie_status engine_cuda_cpq_paper_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    return cuda_run_batches(req, &cpq_method, aHit, aN);
}
