/*
 * genie-mpi serve (tools/mpi/serve_mpi.c): under `mpirun -np 3` (a broker
 * and two rankers, each searching its parts), real HTTP requests must get
 * the bytes `genie serve` answers on the whole index: keywords with labels
 * and records (k larger than a shard, min_count, show), vectors (exact,
 * LSH with K at least the objects, IVF-Flat in parts with nprobe),
 * sequences (exact, show; and certify, whose "candidates" are the shards'
 * own K) and sets (the exact search, measures, thresholds), in batches
 * that mix several requests (concurrent clients).  Reload is refused with
 * 409; SIGTERM to the broker drains, stops
 * the rankers and the job exits 0.  Skips like the other MPI tests, and
 * without server support.
 */
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/vectors.h"
#include "serve_harness.h"
#include "test.h"

#if defined(GENIE_MPI_BIN_PATH) && defined(GENIE_HAVE_SERVER)
#define MPI_SERVE_BUILT 1
#else
#define MPI_SERVE_BUILT 0
#endif
#ifndef GENIE_MPI_BIN_PATH /* no MPI: the names the code below mentions */
#define GENIE_MPI_BIN_PATH ""
#define GENIE_MPIRUN_PATH ""
#endif

/* In the child, before mpirun: as test_mpi.c's mpi_run (mpi_harness.c), OpenMPI's own leaks suppressed, their frames named. */
static void mpi_child_env(void)
{
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    const char *zAsan = getenv("ASAN_OPTIONS");
    if (zAsan) {
        char z[1024];
        snprintf(z, sizeof z, "%s:fast_unwind_on_malloc=0", zAsan);
        setenv("ASAN_OPTIONS", z, 1);
        snprintf(z, sizeof z, "suppressions=%s/lsan-mpi.supp", GENIE_TEST_SOURCE_DIR);
        setenv("LSAN_OPTIONS", z, 1);
        setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 1);
        setenv("PMIX_MCA_mca_base_component_disable_dlclose", "1", 1);
    }
}

/*
 * `mpirun -np 3 genie-mpi serve -j 1 INDEX --listen 127.0.0.1:0 -q`, with
 * a pool of HTTP threads (the genie serve it is compared with has one
 * thread per connection); returns once it listens.
 */
static void mpi_served_start(served *s, const char *zIndex)
{
    const char *const azExec[] = {GENIE_MPIRUN_PATH, "--allow-run-as-root", "--oversubscribe", "--timeout", "120",
                                  "-np", "3", GENIE_MPI_BIN_PATH, "serve", "-j", "1", zIndex, "--listen",
                                  "127.0.0.1:0", "-q", "--max-wait", "20", "--http-threads", "2", NULL};
    served_spawn(s, azExec, mpi_child_env, "genie-mpi serve");
}

/* The process of rank 0 under mpirun @p parent (its environment says OMPI_COMM_WORLD_RANK=0); 0 when none. */
static pid_t rank0_of(pid_t parent)
{
    DIR *d = opendir("/proc");
    CHECK(d != NULL);
    pid_t found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d))) {
        pid_t p = (pid_t)atoi(e->d_name);
        char zPath[64], zBuf[1 << 15];
        if (p <= 0)
            continue;
        snprintf(zPath, sizeof zPath, "/proc/%d/stat", (int)p);
        FILE *f = fopen(zPath, "r");
        int ppid = -1;
        if (f) {
            if (fscanf(f, "%*d (%*[^)]) %*c %d", &ppid) != 1)
                ppid = -1;
            fclose(f);
        }
        if (ppid != parent)
            continue;
        snprintf(zPath, sizeof zPath, "/proc/%d/environ", (int)p);
        f = fopen(zPath, "r");
        if (!f)
            continue;
        size_t n = fread(zBuf, 1, sizeof zBuf - 1, f);
        fclose(f);
        for (size_t i = 0; i < n; i += strlen(zBuf + i) + 1) {
            zBuf[n] = 0;
            if (strcmp(zBuf + i, "OMPI_COMM_WORLD_RANK=0") == 0)
                found = p;
        }
    }
    closedir(d);
    return found;
}

/* SIGTERM to the broker: it drains and stops the rankers; mpirun must then exit 0. */
static void mpi_served_stop(served *s)
{
    pid_t p0 = rank0_of(s->pid);
    CHECK(p0 > 0);
    CHECK(kill(p0, SIGTERM) == 0);
    int status = 0;
    CHECK(waitpid(s->pid, &status, 0) == s->pid);
    close(s->fdOut);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        test_fail_at(__FILE__, __LINE__, "mpirun genie-mpi serve ended with status 0x%x, not exit 0", status);
}

/*
 * "candidates":N blanked: the K of a sequences search is each shard's own
 * (the largest one the shards used, docs/SCALING.md), not one process's.
 */
static void blank_candidates(char *z)
{
    for (char *p = strstr(z, "\"candidates\":"); p; p = strstr(p + 1, "\"candidates\":")) {
        char *q = p + 13;
        while (*q >= '0' && *q <= '9')
            *q++ = '_';
    }
}

/*
 * ,"scanned":B removed: whether --certify's fallback scan answered a query
 * happens on each shard and does not travel to the broker, which leaves
 * the key out (json_out.h).
 */
static void drop_scanned(char *z)
{
    static const char *const azKey[] = {",\"scanned\":true", ",\"scanned\":false"};
    for (int i = 0; i < 2; i++) {
        size_t n = strlen(azKey[i]);
        for (char *p = strstr(z, azKey[i]); p; p = strstr(p, azKey[i]))
            memmove(p, p + n, strlen(p + n) + 1);
    }
}

/* One request to both servers: the same status and body. */
static void same_answer(const served *one, const served *mpi, const char *zPath, const char *zBody)
{
    http_answer a, b;
    int sa = served_request(one, "POST", zPath, zBody, &a);
    int sb = served_request(mpi, "POST", zPath, zBody, &b);
    CHECK_STATUS(sa, 200, &a);
    CHECK_STATUS(sb, 200, &b);
    if (strstr(zBody, "\"certify\"")) {
        blank_candidates(a.zBody);
        blank_candidates(b.zBody);
        drop_scanned(a.zBody);
    }
    if (strcmp(a.zBody, b.zBody) != 0)
        test_fail_at(__FILE__, __LINE__, "%s %s:\n  genie serve     %.600s\n  genie-mpi serve %.600s", zPath, zBody,
                     a.zBody, b.zBody);
    http_answer_free(&a);
    http_answer_free(&b);
}

/* Concurrent clients, so that the batcher puts several requests into one superstep. */
typedef struct client_job {
    const served *one;
    const served *mpi;
    const char *zPath;
    const char *zBody;
} client_job;

static void *client_main(void *arg)
{
    client_job *j = arg;
    same_answer(j->one, j->mpi, j->zPath, j->zBody);
    return NULL;
}

/* Serve @p zIndex (name @p zName) both ways and compare the answers to every body of @p azBody. */
static void compare_servers(const char *zName, const char *zIndex, const char *const *azBody, size_t nBody)
{
    char zSpec[1200], zPath[256];
    snprintf(zSpec, sizeof zSpec, "%s=%s", zName, zIndex);
    snprintf(zPath, sizeof zPath, "/v1/indexes/%s/search", zName);
    const char *azArg[] = {"--index", zSpec, "-j", "1", NULL};
    served one;
    served_start(&one, azArg);
    served mpi;
    mpi_served_start(&mpi, zIndex);
    for (size_t i = 0; i < nBody; i++)
        same_answer(&one, &mpi, zPath, azBody[i]);
    pthread_t aThread[8];
    client_job aJob[8];
    for (int t = 0; t < 8; t++) {
        aJob[t] = (client_job){&one, &mpi, zPath, azBody[(size_t)t % nBody]};
        CHECK(pthread_create(&aThread[t], NULL, client_main, &aJob[t]) == 0);
    }
    for (int t = 0; t < 8; t++)
        pthread_join(aThread[t], NULL);
    http_answer a;
    char zReload[256];
    snprintf(zReload, sizeof zReload, "/v1/indexes/%s/reload", zName);
    CHECK_STATUS(served_request(&mpi, "POST", zReload, NULL, &a), 409, &a);
    http_answer_free(&a);
    served_stop(&one);
    mpi_served_stop(&mpi);
}

TEST(mpi_serve_answers_equal_genie_serve)
{
    if (!MPI_SERVE_BUILT || access(GENIE_MPIRUN_PATH, X_OK) != 0) {
        printf("      skipped: genie-mpi serve was not built (MPI, libmicrohttpd, cJSON) or mpirun is missing\n");
        return;
    }
    uint64_t rng = 0x5e77e;
    /* keywords with labels and records, 5 parts: the rankers get objects 0..99 and 100..249 */
    strbuf f = {0};
    for (unsigned i = 0; i < 250; i++) {
        sb_printf(&f, "%u", 7000 + i);
        unsigned m = 1 + (unsigned)(test_rand(&rng) % 6);
        for (unsigned k = 0; k < m; k++)
            sb_printf(&f, " %u", (unsigned)(test_rand(&rng) % 60));
        sb_printf(&f, "\n");
    }
    write_text(test_path("kw.txt"), f.z);
    build(fmt("--labels --records --part-objects 50 -o %s %s", test_path("kw.genie"), test_path("kw.txt")));
    static const char *const azKw[] = {
        "{\"queries\":[[1,2],[[4,6]],[7,7,30]],\"k\":5}",
        "{\"queries\":[[[0,59]]],\"k\":200,\"show\":true}", /* k above the first shard's 100 objects */
        "{\"queries\":[[1,2,3,4],[5]],\"k\":3,\"min_count\":2}"};
    compare_servers("kw", test_path("kw.genie"), azKw, 3);

    /* sequences in 4 parts */
    f.n = 0;
    for (unsigned i = 0; i < 300; i++) {
        unsigned n = 2 + (unsigned)(test_rand(&rng) % 9);
        for (unsigned j = 0; j < n; j++)
            sb_printf(&f, "%c", 'a' + (int)(test_rand(&rng) % 6));
        sb_printf(&f, "\n");
    }
    write_text(test_path("w.txt"), f.z);
    build(fmt("-t sequences --part-objects 75 -o %s %s", test_path("w.genie"), test_path("w.txt")));
    static const char *const azSeq[] = {"{\"queries\":[\"abcab\",\"fed\",\"a\"],\"k\":4,\"exact\":true,\"show\":true}",
                                        "{\"queries\":[\"abcdef\",\"ccc\"],\"k\":3,\"certify\":4096}"};
    compare_servers("w", test_path("w.genie"), azSeq, 2);

    /* vectors in 3 parts: exact, and LSH with K at least the objects */
    genie_vectors base = {200, 8, malloc(200 * 8 * sizeof(float))};
    CHECK(base.data != NULL);
    for (size_t i = 0; i < 200 * 8; i++)
        base.data[i] = (float)(test_rand(&rng) % 2000) / 1000.0f - 1.0f;
    genie_lsh_params p = {.metric = GENIE_METRIC_L2, .m = 16, .seed = 3};
    genie_build_options opt = {.part_objects = 70};
    CHECK_OK(genie_vectors_build(&base, &p, &opt, test_path("v.genie")));
    genie_vectors_free(&base);
    static const char *const azVec[] = {
        "{\"queries\":[[0.1,0.2,0.3,0.4,-0.5,0.6,0.7,0.8],[0,0,0,0,0,0,0,0]],\"k\":6,\"exact\":true}",
        "{\"queries\":[[0.5,-0.2,0.3,0.1,0.5,0.6,-0.7,0.2]],\"k\":4,\"candidates\":200}"};
    compare_servers("v", test_path("v.genie"), azVec, 2);

    /* an IVF-Flat index in 3 parts (every part the lists of its objects): nprobe, and the index's default */
    base = (genie_vectors){200, 8, malloc(200 * 8 * sizeof(float))};
    CHECK(base.data != NULL);
    for (size_t i = 0; i < 200 * 8; i++)
        base.data[i] = (float)(test_rand(&rng) % 2000) / 1000.0f - 1.0f;
    genie_ivf_params ip = {.metric = GENIE_METRIC_L2, .nlist = 8, .seed = 3, .backend = GENIE_BACKEND_CPU};
    CHECK_OK(genie_vectors_build_ivf(&base, &ip, &opt, test_path("ivf.genie")));
    genie_vectors_free(&base);
    static const char *const azIvf[] = {
        "{\"queries\":[[0.1,0.2,0.3,0.4,-0.5,0.6,0.7,0.8],[0,0,0,0,0,0,0,0]],\"k\":6,\"nprobe\":3}",
        "{\"queries\":[[0.5,-0.2,0.3,0.1,0.5,0.6,-0.7,0.2]],\"k\":4}"};
    compare_servers("ivf", test_path("ivf.genie"), azIvf, 2);

    /* sets in 4 parts: the exact search (genie-mpi answers sets exactly), measures, thresholds */
    f.n = 0;
    for (unsigned i = 0; i < 240; i++) {
        unsigned n = 1 + (unsigned)(test_rand(&rng) % 8);
        for (unsigned j = 0; j < n; j++)
            sb_printf(&f, "%se%u", j ? " " : "", (unsigned)(test_rand(&rng) % 30));
        sb_printf(&f, "\n");
    }
    write_text(test_path("st.txt"), f.z);
    build(fmt("-t sets --part-objects 60 -o %s %s", test_path("st.genie"), test_path("st.txt")));
    static const char *const azSets[] = {
        "{\"queries\":[\"e1 e2 e3\",\"e4\",\"e5 e6 e7 e8 e9\"],\"k\":5,\"exact\":true,\"show\":true}",
        "{\"queries\":[\"e1 e2 e3 e4\",\"e10 e11\"],\"k\":40,\"measure\":\"dice\",\"min_similarity\":0.3}",
        "{\"queries\":[\"e7 e8\"],\"k\":6,\"measure\":\"cosine\"}"};
    compare_servers("st", test_path("st.genie"), azSets, 3);
    free(f.z);
}
