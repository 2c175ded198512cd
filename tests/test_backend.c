/*
 * The backend table (src/engine/backend.h): a backend added by one table
 * entry answers through every search path, names and ids come from the
 * table, and a CPU search never maps the CUDA libraries (the CUDA backend
 * is a module loaded on first need).
 */
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/backend.h"
#include "engine/ivf.h"
#include "genie/vectors.h"
#include "test.h"

/* A backend that forwards to cpu and counts its calls: the seam a
 * multi-GPU or remote backend plugs into. */
static atomic_uint nCalls;

static genie_status counting_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    atomic_fetch_add(&nCalls, 1);
    return engine_cpu_search(req, aHit, aN);
}

static genie_status counting_check(void)
{
    return GENIE_OK;
}

static const engine_backend counting = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-counting", .xCheck = counting_check, .xSearch = counting_search,
};

static void random_objects(test_objects *o, size_t n, uint64_t seed)
{
    o->n = n;
    o->aKw = calloc(n, sizeof *o->aKw);
    o->aN = calloc(n, sizeof *o->aN);
    CHECK(o->aKw && o->aN);
    for (size_t i = 0; i < n; i++) {
        o->aN[i] = test_rand(&seed) % 12;
        o->aKw[i] = malloc((o->aN[i] + 1) * sizeof **o->aKw);
        CHECK(o->aKw[i] != NULL);
        for (size_t j = 0; j < o->aN[i]; j++)
            o->aKw[i][j] = (uint32_t)(test_rand(&seed) % 200);
    }
}

static genie_queries *random_queries(size_t n, uint64_t seed)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (size_t i = 0; i < n; i++) {
        genie_item aItem[4];
        size_t nItem = 1 + test_rand(&seed) % 4;
        for (size_t j = 0; j < nItem; j++) {
            uint32_t lo = (uint32_t)(test_rand(&seed) % 200);
            aItem[j] = (genie_item){lo, lo + (uint32_t)(test_rand(&seed) % 3), 1 + (uint32_t)(test_rand(&seed) % 3)};
        }
        CHECK_OK(genie_queries_add(q, aItem, nItem, 0));
    }
    return q;
}

TEST(backend_table_test_entry)
{
    genie_backend id;
    CHECK_OK(engine_backend_register(&counting, &id));
    CHECK(id > GENIE_BACKEND_CUDA_CPQ_PAPER);
    CHECK(strcmp(genie_backend_name(id), "test-counting") == 0);
    genie_backend parsed;
    CHECK_OK(genie_backend_parse("test-counting", &parsed));
    CHECK_EQ(parsed, id);
    CHECK_RC(engine_backend_register(&counting, &id), GENIE_EINVAL); /* the name is taken */

    test_objects objs;
    random_objects(&objs, 3000, 7);
    genie_queries *q = random_queries(200, 11);
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_index *one = test_build_with(&objs, &bo, test_path("one.genie"));
    bo.part_objects = 700; /* five parts: the parts path goes through the table too */
    genie_index *many = test_build_with(&objs, &bo, test_path("many.genie"));
    CHECK_EQ(genie_index_parts(many), 5);

    genie_results *ref = test_search(one, q, GENIE_BACKEND_CPU, 10);
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = id;
    opt.k = 10;
    const genie_search_options copy = opt;
    genie_results *r;
    genie_search_stats st;
    CHECK_OK(genie_search_with_stats(one, q, &opt, &r, &st));
    CHECK_EQ(st.backend, id);
    CHECK_EQ(atomic_load(&nCalls), 1);
    test_same_results(ref, r, "test backend, one part");
    genie_results_free(r);
    CHECK_OK(genie_search_with_stats(many, q, &opt, &r, &st));
    CHECK_EQ(st.backend, id);
    CHECK_EQ(atomic_load(&nCalls), 1 + 5);
    test_same_results(ref, r, "test backend, five parts");
    genie_results_free(r);
    CHECK(memcmp(&copy, &opt, sizeof opt) == 0); /* options are inputs */

    genie_results_free(ref);
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}

/*
 * A backend with four devices and parts hooks (every part resident), so
 * that the several-GPU paths (replicas and shards, engine/devices.c and
 * engine/parts.c) run on the CPU; it records which device each call ran on.
 */
#define N_FAKE_DEVICES 4
static atomic_uint aDeviceCalls[N_FAKE_DEVICES];

static genie_status device_search(const engine_request *req, genie_hit *aHit, uint32_t *aN)
{
    CHECK(req->device >= 0 && req->device < N_FAKE_DEVICES);
    atomic_fetch_add(&aDeviceCalls[req->device], 1);
    return engine_cpu_search(req, aHit, aN);
}

static int fake_devices(void)
{
    return N_FAKE_DEVICES;
}

static int fake_fits(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory)
{
    (void)idx;
    (void)pFirst;
    (void)pEnd;
    (void)device;
    return gpuMemory == 0; /* a budget makes "auto" choose shards */
}

static genie_status fake_begin(const genie_index *idx, uint32_t pFirst, uint32_t pEnd, int device, uint64_t gpuMemory,
                               int serialUpload, engine_stream **ppS, int *pOverlap, uint64_t *pLeft)
{
    (void)idx;
    (void)serialUpload;
    CHECK(pFirst < pEnd && device >= 0 && device < N_FAKE_DEVICES);
    *ppS = NULL; /* resident */
    *pOverlap = 0;
    *pLeft = gpuMemory;
    return GENIE_OK;
}

static const engine_parts_ops fake_parts = {.xFits = fake_fits, .xBegin = fake_begin};

static const engine_backend multi = {
    .iVersion = ENGINE_BACKEND_VERSION, .zName = "test-devices", .xCheck = counting_check, .xSearch = device_search, .pParts = &fake_parts,
    .xDevices = fake_devices,
};

static void reset_device_calls(void)
{
    for (int d = 0; d < N_FAKE_DEVICES; d++)
        atomic_store(&aDeviceCalls[d], 0);
}

/* Search with the device list and mode; the answers must be @p ref's. */
static void check_devices(genie_backend id, const genie_index *idx, const genie_queries *q, const genie_results *ref,
                          const int *aGpu, unsigned nGpu, genie_gpu_mode mode, uint64_t gpuMemory,
                          genie_gpu_mode wantMode, const char *zWhat)
{
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = id;
    opt.k = 10;
    opt.gpus = aGpu;
    opt.n_gpus = nGpu;
    opt.gpu_mode = mode;
    opt.gpu_memory = gpuMemory;
    genie_results *r;
    genie_search_stats st;
    reset_device_calls();
    CHECK_OK(genie_search_with_stats(idx, q, &opt, &r, &st));
    test_same_results(ref, r, zWhat);
    CHECK_EQ(st.n_gpus, nGpu);
    CHECK_EQ(st.gpu_mode, wantMode);
    for (unsigned i = 0; i < nGpu; i++)
        if (atomic_load(&aDeviceCalls[aGpu[i]]) == 0)
            test_fail_at(__FILE__, __LINE__, "%s: GPU %d got no work", zWhat, aGpu[i]);
    genie_results_free(r);
}

TEST(backend_several_devices)
{
    genie_backend id;
    CHECK_OK(engine_backend_register(&multi, &id));
    test_objects objs;
    random_objects(&objs, 4000, 17);
    genie_queries *q = random_queries(300, 19);
    genie_build_options bo;
    memset(&bo, 0, sizeof bo);
    genie_index *one = test_build_with(&objs, &bo, test_path("one.genie"));
    bo.part_objects = 650; /* seven parts, unequal runs over three GPUs */
    genie_index *many = test_build_with(&objs, &bo, test_path("many.genie"));
    CHECK_EQ(genie_index_parts(many), 7);
    genie_results *ref = test_search(one, q, GENIE_BACKEND_CPU, 10);

    const int aAll[] = {0, 1, 2, 3}, aThree[] = {3, 0, 2};
    check_devices(id, one, q, ref, aAll, 4, GENIE_GPU_AUTO, 0, GENIE_GPU_REPLICAS, "replicas, one part");
    check_devices(id, many, q, ref, aAll, 4, GENIE_GPU_REPLICAS, 0, GENIE_GPU_REPLICAS, "replicas, seven parts");
    check_devices(id, many, q, ref, aThree, 3, GENIE_GPU_SHARDS, 0, GENIE_GPU_SHARDS, "shards over three GPUs");
    check_devices(id, many, q, ref, aAll, 4, GENIE_GPU_AUTO, 1u << 20, GENIE_GPU_SHARDS, "auto: shards");
    check_devices(id, many, q, ref, aAll, 4, GENIE_GPU_AUTO, 0, GENIE_GPU_REPLICAS, "auto: replicas (fits)");
    check_devices(id, many, q, ref, aThree + 1, 1, GENIE_GPU_AUTO, 0, GENIE_GPU_AUTO, "one GPU of a list");

    /* Bad lists are refused with a message that names the problem. */
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = id;
    opt.k = 10;
    genie_results *r;
    const int aTwice[] = {1, 1}, aMissing[] = {0, 9};
    opt.gpus = aTwice;
    opt.n_gpus = 2;
    CHECK_RC(genie_search(many, q, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "twice") != NULL);
    opt.gpus = aMissing;
    CHECK_RC(genie_search(many, q, &opt, &r), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "GPU 9") != NULL);
    opt.gpus = aAll;
    opt.n_gpus = 4;
    opt.gpu_mode = GENIE_GPU_SHARDS;
    CHECK_RC(genie_search(one, q, &opt, &r), GENIE_EINVAL); /* one part, four shards */
    CHECK(strstr(genie_last_error(), "parts") != NULL);
    opt.backend = GENIE_BACKEND_CPU;
    CHECK_RC(genie_search(one, q, &opt, &r), GENIE_EINVAL); /* the CPU has no GPUs */

    genie_results_free(ref);
    genie_queries_free(q);
    genie_index_close(one);
    genie_index_close(many);
    test_objects_free(&objs);
}

TEST(backend_names_and_errors)
{
    genie_backend b;
    CHECK_RC(genie_backend_parse("nope", &b), GENIE_EINVAL);
    CHECK(strstr(genie_last_error(), "nope") != NULL);
    CHECK(genie_backend_name((genie_backend)99) == NULL);
    const char *azName[] = {"auto", "cpu", "cpu-idx", "cuda", "cuda-spq", "cuda-cpq-paper"};
    for (int i = 0; i < 6; i++) {
        CHECK_OK(genie_backend_parse(azName[i], &b));
        CHECK_EQ(b, i);
        CHECK(strcmp(genie_backend_name(b), azName[i]) == 0);
    }
    const engine_backend *be;
    CHECK_OK(engine_backend_pick(GENIE_BACKEND_AUTO, &be));
    CHECK(be->id == GENIE_BACKEND_CPU || be->id == GENIE_BACKEND_CUDA);
    CHECK_RC(engine_backend_pick((genie_backend)99, &be), GENIE_EINVAL);
    /* The lists of names come from the table: every name known, the usable ones. */
    char zKnown[256], zUsable[256];
    size_t nKnown = genie_backend_list(0, zKnown, sizeof zKnown);
    CHECK_EQ(nKnown, strlen(zKnown));
    const char *zBuiltin = "auto, cpu, cpu-idx, cuda, cuda-spq, cuda-cpq-paper";
    CHECK(strncmp(zKnown, zBuiltin, strlen(zBuiltin)) == 0);
    CHECK_EQ(genie_backend_list(0, zUsable, 5), nKnown); /* truncated, the whole length still told */
    CHECK(strcmp(zUsable, "auto") == 0);
    int avail = genie_cuda_available(); /* loads the module where there is a GPU */
    genie_backend_list(1, zUsable, sizeof zUsable);
    CHECK(strstr(zUsable, ", cpu") != NULL);
    CHECK((strstr(zUsable, "cuda") != NULL) == avail);
    /* The CUDA module's backends: a placeholder until the module registers the full entry. */
    const engine_backend *pCuda = engine_backend_find(GENIE_BACKEND_CUDA);
    CHECK(pCuda != NULL);
    if (!avail) {
        CHECK(pCuda->xSearch == NULL);
        genie_status want = genie_cuda_built() ? GENIE_EGPU : GENIE_ENOTSUP;
        CHECK_RC(engine_backend_pick(GENIE_BACKEND_CUDA, &be), want);
        CHECK(strlen(genie_last_error()) > 0);
        CHECK_RC(engine_backend_pick_cap(GENIE_BACKEND_CUDA, ENGINE_CAP(pExact), &be), want);
        uint64_t used, total;
        CHECK_RC(genie_cuda_memory(0, &used, &total), want);
    } else {
        CHECK(pCuda->xSearch != NULL && pCuda->pExact && pCuda->pPairs && pCuda->pEdit && pCuda->pLsh &&
              pCuda->pDocs);
        CHECK_OK(engine_backend_pick_cap(GENIE_BACKEND_AUTO, ENGINE_CAP(pDocs), &be));
        CHECK(be == pCuda);
        uint64_t used = 0, total = 0;
        CHECK_OK(genie_cuda_memory(0, &used, &total));
        CHECK(used > 0 && used <= total);
        CHECK_RC(genie_cuda_memory(genie_cuda_device_count(), &used, &total), GENIE_EINVAL);
        CHECK_RC(genie_cuda_memory(-1, &used, &total), GENIE_EINVAL);
    }
}

static genie_status fake_exact(int device, void **ppResident, const float *base, uint64_t nBase,
                               const float *queries, uint64_t nQuery, uint32_t dim, genie_metric metric,
                               genie_precision precision, const uint64_t *aAllow, uint32_t k, genie_neighbor *out,
                               engine_exact_counts *pCounts)
{
    (void)device, (void)ppResident, (void)base, (void)nBase, (void)queries, (void)dim, (void)metric;
    (void)precision, (void)aAllow;
    pCounts->distances += 2 * nQuery; /* what it claims, to be seen in the stats */
    pCounts->direct += nQuery;
    for (uint64_t i = 0; i < nQuery * k; i++)
        out[i] = (genie_neighbor){(uint32_t)(i % k), 0};
    return GENIE_OK;
}

static const engine_exact_ops fakeExactOps = {.xSearch = fake_exact, .nMaxK = 3};

/*
 * Registration checks its entries; a capability is found through the
 * table (engine_backend_pick_cap): the backend when it has it, NULL (the
 * CPU) when it has not, and the exact search takes it.
 */
TEST(backend_registry_capabilities)
{
    engine_backend e = {.iVersion = ENGINE_BACKEND_VERSION, .zName = "test-exact", .xCheck = counting_check,
                        .xSearch = counting_search, .pExact = &fakeExactOps};
    genie_backend id;
    e.iVersion = ENGINE_BACKEND_VERSION + 1;
    CHECK_RC(engine_backend_register(&e, &id), GENIE_EINVAL); /* a version this library cannot read */
    CHECK(strstr(genie_last_error(), "version") != NULL);
    e.iVersion = ENGINE_BACKEND_VERSION;
    e.zName = "cpu";
    CHECK_RC(engine_backend_register(&e, &id), GENIE_EINVAL); /* a full entry's name */
    e.zName = "test-exact";
    e.xSearch = NULL;
    CHECK_RC(engine_backend_register(&e, &id), GENIE_EINVAL);
    e.xSearch = counting_search;
    CHECK_OK(engine_backend_register(&e, &id));
    char zKnown[256];
    genie_backend_list(0, zKnown, sizeof zKnown);
    CHECK(strstr(zKnown, ", test-exact") != NULL);

    const engine_backend *be;
    CHECK_OK(engine_backend_pick_cap(GENIE_BACKEND_CPU, ENGINE_CAP(pExact), &be));
    CHECK(be == NULL);
    CHECK_OK(engine_backend_pick_cap(id, ENGINE_CAP(pExact), &be));
    CHECK(be != NULL && be->id == id && be->pExact == &fakeExactOps);
    CHECK_OK(engine_backend_pick_cap(id, ENGINE_CAP(pPairs), &be));
    CHECK(be == NULL);

    float aBase[8] = {0}, aQ[2] = {0};
    genie_vectors base = {4, 2, aBase}, q = {1, 2, aQ};
    genie_neighbor out[4];
    genie_search_stats st;
    CHECK_OK(genie_exact_search(&base, &q, GENIE_METRIC_L2, 3, id, 1, out, &st));
    CHECK_EQ(st.backend, id);
    CHECK_EQ(out[2].id, 2); /* the fake's answer */
    CHECK_EQ(st.verified, 2); /* its counts, per call */
    CHECK_EQ(st.fallback, 1);
    CHECK_RC(genie_exact_search(&base, &q, GENIE_METRIC_L2, 4, id, 1, out, &st), GENIE_EINVAL); /* its k */
}

static genie_status unused_sim(void **ppResident, const sim_request *req, sim_results *out, uint8_t *aUndone)
{
    (void)ppResident, (void)req, (void)out, (void)aUndone;
    return GENIE_EINVAL;
}

static const engine_sim_ops unusedSimOps = {.xSearch = unused_sim, .nMaxK = 1};

/*
 * An entry made against an older header is read up to the members its
 * version has: a version-1 entry offers no exact set search (pSim, added
 * in version 2), whatever lies past its end.
 */
TEST(backend_registry_reads_an_older_version)
{
    engine_backend e = {.iVersion = 1, .zName = "test-version-1", .xCheck = counting_check,
                        .xSearch = counting_search, .pExact = &fakeExactOps, .pSim = &unusedSimOps};
    genie_backend id;
    CHECK_OK(engine_backend_register(&e, &id));
    const engine_backend *be;
    CHECK_OK(engine_backend_pick_cap(id, ENGINE_CAP(pExact), &be));
    CHECK(be != NULL && be->pExact == &fakeExactOps);
    CHECK_OK(engine_backend_pick_cap(id, ENGINE_CAP(pSim), &be));
    CHECK(be == NULL);
    e.iVersion = ENGINE_BACKEND_VERSION;
    e.zName = "test-version-2";
    CHECK_OK(engine_backend_register(&e, &id));
    CHECK_OK(engine_backend_pick_cap(id, ENGINE_CAP(pSim), &be));
    CHECK(be != NULL && be->pSim == &unusedSimOps);
}

/* An IVF capability that answers id 1 - i for the i-th of k, and keeps a resident it counts. */
static int nIvfFree;

static genie_status fake_ivf_search(int device, void **ppResident, const engine_ivf *ix, const engine_ivf_query *q,
                                    genie_neighbor *out, uint32_t *aN)
{
    (void)device, (void)ix;
    *ppResident = &nIvfFree;
    for (uint64_t i = 0; i < q->n; i++) {
        aN[i] = q->k;
        for (uint32_t j = 0; j < q->k; j++)
            out[i * q->k + j] = (genie_neighbor){1 - j, (float)j};
    }
    return GENIE_OK;
}

static void fake_ivf_free(void *p)
{
    (void)p;
    nIvfFree++;
}

static const engine_ivf_ops fakeIvfOps = {.xSearch = fake_ivf_search, .xFree = fake_ivf_free};

/*
 * The registry reads of an entry the members of its version: an entry of
 * version 2 (before pIvf) offers no IVF whatever its struct holds beyond;
 * one of version 3 does, and the inverted-file search takes it.
 */
TEST(backend_registry_reads_by_version)
{
    engine_backend e = {.iVersion = 2, .zName = "test-v2", .xCheck = counting_check, .xSearch = counting_search,
                        .pIvf = &fakeIvfOps};
    genie_backend id1, id2;
    CHECK_OK(engine_backend_register(&e, &id1));
    e.iVersion = 3;
    e.zName = "test-ivf";
    CHECK_OK(engine_backend_register(&e, &id2));
    const engine_backend *be;
    CHECK_OK(engine_backend_pick_cap(id1, ENGINE_CAP(pIvf), &be));
    CHECK(be == NULL);
    CHECK_OK(engine_backend_pick_cap(id2, ENGINE_CAP(pIvf), &be));
    CHECK(be != NULL && be->pIvf == &fakeIvfOps);

    float aCent[2] = {0, 0}, aVec[4] = {0, 0, 1, 1}, aQ[2] = {0, 0};
    uint64_t aStart[2] = {0, 2};
    uint32_t aId[2] = {0, 1};
    engine_ivf ix = {.metric = GENIE_METRIC_L2, .dim = 2, .nlist = 1, .n = 2, .aCentroid = aCent,
                     .aListStart = aStart, .aId = aId, .aVec = aVec};
    engine_ivf_query q = {.aQuery = aQ, .n = 1, .k = 2, .nprobe = 1, .threads = 1};
    genie_neighbor out[2];
    uint32_t aN[1];
    genie_backend used;
    nIvfFree = 0;
    CHECK_OK(engine_ivf_search(&ix, NULL, NULL, &q, id2, 0, out, aN, &used));
    CHECK(used == id2 && out[0].id == 1 && out[1].id == 0 && nIvfFree == 1); /* the fake's; its copy freed */
    CHECK_OK(engine_ivf_search(&ix, NULL, NULL, &q, id1, 0, out, aN, &used));
    CHECK(used == GENIE_BACKEND_CPU && out[0].id == 0 && out[1].id == 1); /* the CPU's answer */
}

/* Whether this process has a CUDA library mapped. */
static int cuda_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char z[4096];
    int found = 0;
    while (!found && fgets(z, sizeof z, f))
        found = strstr(z, "libcudart") || strstr(z, "libcublas");
    fclose(f);
    return found;
}

/* Whether this process has OpenBLAS mapped. */
static int blas_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char z[4096];
    int found = 0;
    while (!found && fgets(z, sizeof z, f))
        found = strstr(z, "libopenblas") != NULL;
    fclose(f);
    return found;
}

/*
 * OpenBLAS (its thread pool: a thread and a stack per core) is opened on
 * the first exact vector search, never by a process that only counts; the
 * exact search still answers (through it, or the direct loop without it).
 */
TEST(backend_blas_opened_on_first_exact_search)
{
    test_objects objs;
    random_objects(&objs, 500, 3);
    genie_index *idx = test_build(&objs, 0, test_path("cpu.genie"));
    genie_queries *q = random_queries(20, 5);
    genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, 5);
    CHECK(!blas_mapped());
    genie_results_free(r);
    float aBase[] = {0, 0, 1, 0, 0, 1, 1, 1}, aQuery[] = {0.9f, 0.8f};
    genie_vectors base = {.n = 4, .dim = 2, .data = aBase}, vq = {.n = 1, .dim = 2, .data = aQuery};
    genie_neighbor out[2];
    CHECK_OK(genie_exact_search(&base, &vq, GENIE_METRIC_L2, 2, GENIE_BACKEND_CPU, 1, out, NULL));
    CHECK_EQ(out[0].id, 3u);
    CHECK_EQ(out[1].id, 1u);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
}

TEST(backend_cpu_never_maps_cuda)
{
    test_objects objs;
    random_objects(&objs, 500, 3);
    genie_index *idx = test_build(&objs, 0, test_path("cpu.genie"));
    genie_queries *q = random_queries(20, 5);
    genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, 5);
    CHECK(!cuda_mapped());
    genie_results_free(r);

#ifdef GENIE_ASAN_RUNTIME
    /* A sanitized genie cannot start under the limit: ASan reserves terabytes of shadow address space. */
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
    return;
#endif
    /* The command, under an address-space limit the CUDA libraries alone exceed. */
    FILE *f = fopen(test_path("q.txt"), "w");
    CHECK(f != NULL);
    fputs("1 2 3\n10-20:2\n", f);
    fclose(f);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = {200u << 20, 200u << 20};
        setrlimit(RLIMIT_AS, &rl);
        if (!freopen("/dev/null", "w", stdout))
            _exit(126);
        execl(GENIE_BIN_PATH, "genie", "search", "-b", "cpu", "-k", "3", test_path("cpu.genie"), test_path("q.txt"),
              (char *)NULL);
        _exit(127);
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    genie_queries_free(q);
    genie_index_close(idx);
    test_objects_free(&objs);
}
