/*
 * Malicious but well-formed index files: small indexes of every type whose
 * fields are rewritten one at a time to boundary values (0, 1, maxima,
 * huge, and for floats NaN, infinities, the largest and the smallest
 * normal), with every checksum recomputed afterwards (probe.c), so each
 * rewrite reaches the checks behind the CRCs.  Every open and search of
 * every such file must either work or fail cleanly with a message, within
 * a memory bound (RLIMIT_AS, or the child's peak RSS under AddressSanitizer,
 * which reserves terabytes of address space) and a time bound (alarm).
 *
 * The fields rewritten: each 4-byte field of the fixed header, each field of
 * each section table entry (u32 and u64 views), each field of PARTS, a
 * u32 at every byte offset of the first 160 bytes of FRONTEND, and of an
 * inverted-file index every u32 of its first list sections (the lists
 * and their offsets) and of the vector index sections (the centroids,
 * codebooks and codes: NaN, infinities, codes past 2^bits).
 */
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/text.h"
#include "genie/vectors.h"
#include "index/format.h"
#include "probe.h"
#include "test.h"

#if defined(__SANITIZE_ADDRESS__)
#define MALICIOUS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MALICIOUS_ASAN 1
#endif
#endif

#define MALICIOUS_MEMORY (1536ull << 20) /* bytes a child may use */
#define MALICIOUS_SECONDS 30u            /* per child (one field, every value) */

static const uint32_t aValue32[] = {0,          1,          2,          0x7f,       0xff,
                                    0xffff,     0x10000,    0x7fffffff, 0x80000000, 0xffffffff,
                                    0x7f800000, 0xff800000, 0x7fc00000, 0x7f7fffff, 0x00800000};

static void write_text(const char *path, const char *z)
{
    test_write_file(path, z, strlen(z));
}

/* The small indexes, one of every type (and a keywords index and an IVF-PQ index of 3 parts). */
static int build_indexes(const char **azPath)
{
    int n = 0;
    genie_build_options opt = {.sublist_length = 2};
    genie_build_options optParts = {.sublist_length = 2, .part_objects = 2};

    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, &optParts));
    for (uint32_t i = 0; i < 6; i++) {
        uint32_t aKw[3] = {i, i * 7 % 5, 40 + i};
        genie_object o = {aKw, 3, 1, 1000 + i, "rec", 3};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, azPath[n++] = strdup(test_path("keywords.genie"))));
    genie_builder_free(b);

    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, &opt, NULL, 0, 1));
    const char *azDoc[] = {"the quick brown fox", "jumps over the lazy dog", "", "fox and dog"};
    for (size_t i = 0; i < 4; i++)
        CHECK_OK(genie_text_builder_add(tb, azDoc[i], strlen(azDoc[i])));
    CHECK_OK(genie_text_builder_write(tb, azPath[n++] = strdup(test_path("text.genie"))));
    genie_text_builder_free(tb);

    genie_set_params sp = {8, 7, 0};
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, &opt, &sp));
    const char *azSet[] = {"a b c", "b c d", "", "x y"};
    for (size_t i = 0; i < 4; i++)
        CHECK_OK(genie_set_builder_add(sb, azSet[i], strlen(azSet[i])));
    CHECK_OK(genie_set_builder_write(sb, azPath[n++] = strdup(test_path("sets.genie"))));
    genie_set_builder_free(sb);

    genie_seq_builder *qb;
    CHECK_OK(genie_seq_builder_new(&qb, &opt, 3));
    const char *azSeq[] = {"hello", "help", "yellow", "hi"};
    for (size_t i = 0; i < 4; i++)
        CHECK_OK(genie_seq_builder_add(qb, azSeq[i], strlen(azSeq[i])));
    CHECK_OK(genie_seq_builder_write(qb, azPath[n++] = strdup(test_path("sequences.genie"))));
    genie_seq_builder_free(qb);

    write_text(test_path("t.csv"), "n,c,s\n1.5,a,x\n-2,b,y\n?,a,\n7,,z\n");
    genie_table_options topt = {.bins = 8, .columns = "n,c"};
    CHECK_OK(genie_table_build(test_path("t.csv"), &topt, &opt, azPath[n++] = strdup(test_path("table.genie"))));

    float aVec[6 * 3];
    for (int i = 0; i < 18; i++)
        aVec[i] = (float)((i * 37) % 11) - 5.0f;
    genie_vectors base = {6, 3, aVec};
    const genie_metric aMetric[3] = {GENIE_METRIC_L2, GENIE_METRIC_L1, GENIE_METRIC_COSINE};
    const char *azName[3] = {"vectors-l2.genie", "vectors-l1.genie", "vectors-cosine.genie"};
    for (int i = 0; i < 3; i++) {
        genie_lsh_params lp = {aMetric[i], 4, 0, 0, 0, 0, 9};
        CHECK_OK(genie_vectors_build(&base, &lp, &opt, azPath[n++] = strdup(test_path(azName[i]))));
    }
    /* Inverted files: IVF-Flat (ip) and IVF-PQ (l2, 2 sub-quantizers of 3 bits, refined). */
    genie_ivf_params ip = {.metric = GENIE_METRIC_IP, .nlist = 3, .iterations = 2, .seed = 5,
                           .backend = GENIE_BACKEND_CPU};
    CHECK_OK(genie_vectors_build_ivf(&base, &ip, &opt, azPath[n++] = strdup(test_path("ivf-flat.genie"))));
    genie_ivf_params pp = {.metric = GENIE_METRIC_L2, .nlist = 2, .pq_m = 3, .pq_bits = 2, .refine = 1,
                           .iterations = 2, .seed = 5, .backend = GENIE_BACKEND_CPU};
    CHECK_OK(genie_vectors_build_ivf(&base, &pp, &opt, azPath[n++] = strdup(test_path("ivf-pq.genie"))));
    CHECK_OK(genie_vectors_build_ivf(&base, &pp, &optParts, azPath[n++] = strdup(test_path("ivf-pq-parts.genie"))));
    return n;
}

/* One field of one file, every value: what the child is doing, for a crash report. */
typedef struct field_case {
    const char *zFile;
    const unsigned char *a;
    size_t n;
    size_t at;
    int width; /* 4 or 8 */
    char zWhat[96];
} field_case;

static void limit_child(void)
{
#ifndef MALICIOUS_ASAN
    struct rlimit rl = {MALICIOUS_MEMORY, MALICIOUS_MEMORY};
    setrlimit(RLIMIT_AS, &rl);
#endif
    alarm(MALICIOUS_SECONDS);
}

/* The values of one field, in a child; *pShared gets the value being tried. */
static void run_field(const field_case *fc, const char *zTmp, volatile uint64_t *pShared)
{
    limit_child();
    unsigned char *b = malloc(fc->n);
    uint64_t aValue64[] = {0, 1, 2, (uint64_t)fc->n, (uint64_t)fc->n + 64, (uint64_t)1 << 32, (uint64_t)1 << 62,
                           UINT64_MAX};
    size_t nValue = fc->width == 4 ? sizeof aValue32 / sizeof *aValue32 : sizeof aValue64 / sizeof *aValue64;
    for (size_t v = 0; v < nValue; v++) {
        memcpy(b, fc->a, fc->n);
        uint64_t x = fc->width == 4 ? aValue32[v] : aValue64[v];
        *pShared = x;
        if (fc->width == 4) {
            uint32_t x32 = (uint32_t)x;
            memcpy(b + fc->at, &x32, 4);
        } else {
            memcpy(b + fc->at, &x, 8);
        }
        probe_repair_checksums(b, fc->n);
        test_write_file(zTmp, b, fc->n);
        probe_index(zTmp); /* aborts on a broken promise; a clean failure is fine */
    }
    free(b);
    _exit(0);
}

static void check_field(const field_case *fc, const char *zTmp, volatile uint64_t *pShared)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0)
        run_field(fc, zTmp, pShared);
    int status;
    struct rusage ru;
    CHECK(wait4(pid, &status, 0, &ru) == pid);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        test_fail_at(__FILE__, __LINE__, "%s, %s (offset %zu) = %#llx: %s %d", fc->zFile, fc->zWhat, fc->at,
                     (unsigned long long)*pShared, WIFSIGNALED(status) ? "killed by signal" : "exit status",
                     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    if ((uint64_t)ru.ru_maxrss * 1024 > MALICIOUS_MEMORY)
        test_fail_at(__FILE__, __LINE__, "%s, %s (offset %zu): peak RSS %ld KiB", fc->zFile, fc->zWhat, fc->at,
                     ru.ru_maxrss);
}

static uint64_t get64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static uint32_t get32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static size_t rewrite_every_field(const char *path, volatile uint64_t *pShared)
{
    size_t n, nCase = 0;
    unsigned char *a = test_read_file(path, &n);
    CHECK(n > FORMAT_FIXED_HEADER);
    CHECK_OK(probe_index(path)); /* the file as written works */
    const char *zTmp = test_path("rewritten.genie");
    field_case fc = {path, a, n, 0, 4, ""};
    for (size_t at = 0; at < FORMAT_FIXED_HEADER; at += 4, nCase++) {
        fc.at = at;
        fc.width = 4;
        snprintf(fc.zWhat, sizeof fc.zWhat, "header u32 at %zu", at);
        check_field(&fc, zTmp, pShared);
        if (at % 8 == 0 && at >= 16 && at < 64) {
            fc.width = 8;
            snprintf(fc.zWhat, sizeof fc.zWhat, "header u64 at %zu", at);
            check_field(&fc, zTmp, pShared);
        }
    }
    uint32_t nSection = get32(a + 80);
    for (uint32_t s = 0; s < nSection; s++) {
        size_t e = FORMAT_FIXED_HEADER + (size_t)FORMAT_ENTRY_SIZE * s;
        uint32_t id = get32(a + e);
        uint64_t off = get64(a + e + 8), size = get64(a + e + 16);
        for (size_t f = 0; f < FORMAT_ENTRY_SIZE; f += 4, nCase++) {
            if (f == 24)
                continue; /* the CRC: repaired anyway */
            fc.at = e + f;
            fc.width = 4;
            snprintf(fc.zWhat, sizeof fc.zWhat, "section %u (%s) entry +%zu", s, format_section_name(id), f);
            check_field(&fc, zTmp, pShared);
            if (f == 8 || f == 16) {
                fc.width = 8;
                check_field(&fc, zTmp, pShared);
            }
        }
        size_t nField = 0, step = 4;
        int vectorIndex = get32(a + 76) & FORMAT_FLAG_VECTOR;
        if (id == SEC_PARTS || id >= SEC_IVF_CENTROIDS || (vectorIndex && id >= SEC_KEYWORDS && id <= SEC_POSTINGS))
            nField = (size_t)size;
        else if (id == SEC_FRONTEND)
            nField = size < 160 ? (size_t)size : 160, step = 1;
        for (size_t f = 0; f + 4 <= nField; f += step, nCase++) {
            fc.at = (size_t)off + f;
            fc.width = 4;
            snprintf(fc.zWhat, sizeof fc.zWhat, "%s u32 at +%zu", format_section_name(id), f);
            check_field(&fc, zTmp, pShared);
            if (id == SEC_PARTS && f % 8 == 0 && f % FORMAT_PART_ENTRY < 40) {
                fc.width = 8;
                snprintf(fc.zWhat, sizeof fc.zWhat, "%s u64 at +%zu", format_section_name(id), f);
                check_field(&fc, zTmp, pShared);
            }
        }
    }
    free(a);
    return nCase;
}

TEST(malicious_fields_every_type)
{
    const char *azPath[16];
    int nPath = build_indexes(azPath);
    volatile uint64_t *pShared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(pShared != MAP_FAILED);
    size_t nCase = 0;
    for (int i = 0; i < nPath; i++)
        nCase += rewrite_every_field(azPath[i], pShared);
    CHECK(nCase > 1000);
    munmap((void *)pShared, 4096);
    for (int i = 0; i < nPath; i++)
        free((void *)azPath[i]);
}

/* The section @p id of part 0 of image @p a: its offset and size. */
static void find_section(const unsigned char *a, uint32_t id, uint64_t *pOff, uint64_t *pSize)
{
    uint32_t nSection = get32(a + 80);
    for (uint32_t s = 0; s < nSection; s++) {
        const unsigned char *e = a + FORMAT_FIXED_HEADER + (size_t)FORMAT_ENTRY_SIZE * s;
        if (get32(e) == id && get32(e + 4) == 0) {
            *pOff = get64(e + 8);
            *pSize = get64(e + 16);
            return;
        }
    }
    test_fail_at(__FILE__, __LINE__, "no section %u", id);
}

/* Rewrite @p image into @p path (checksums repaired); the index must open, MinHash work, the exact search refuse it. */
static void check_refused(const unsigned char *image, size_t n, const char *path, const char *zWhy)
{
    unsigned char *b = malloc(n);
    memcpy(b, image, n);
    probe_repair_checksums(b, n);
    test_write_file(path, b, n);
    free(b);
    genie_index *idx;
    CHECK_OK(genie_index_open(path, &idx));
    const char *q = "a b c";
    size_t nq = 5;
    genie_search_options opt;
    memset(&opt, 0, sizeof opt);
    opt.backend = GENIE_BACKEND_CPU;
    genie_set_results *r;
    genie_set_options so = {.k = 3, .candidates = 4};
    CHECK_OK(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r)); /* MinHash reads no element list */
    genie_set_results_free(r);
    so = (genie_set_options){.k = 3, .exact = 1};
    CHECK_RC(genie_set_search(idx, &q, &nq, 1, &so, &opt, &r), GENIE_ECORRUPT);
    if (!strstr(genie_last_error(), zWhy))
        test_fail_at(__FILE__, __LINE__, "message '%s' lacks '%s'", genie_last_error(), zWhy);
    genie_index_close(idx);
}

/*
 * A sets index's element lists that contradict themselves, checksums
 * valid: a set moved to another size class's list, a keyword naming an
 * element past the vocabulary, a posting naming a set of another size.
 * The format reader cannot see these (sets_exact.c checks them on the
 * first exact search): the exact search must refuse the file, not answer.
 */
TEST(malicious_sets_element_lists)
{
    genie_set_params sp = {8, 7, 0};
    genie_set_builder *sb;
    CHECK_OK(genie_set_builder_new(&sb, NULL, &sp));
    const char *azSet[] = {"a b c", "b c d", "x y", "a"}; /* sizes 3, 3, 2, 1: classes 2, 2, 1, 0 */
    for (size_t i = 0; i < 4; i++)
        CHECK_OK(genie_set_builder_add(sb, azSet[i], strlen(azSet[i])));
    const char *zPath = test_path("sets.genie");
    CHECK_OK(genie_set_builder_write(sb, zPath));
    genie_set_builder_free(sb);
    size_t n;
    unsigned char *a = test_read_file(zPath, &n);
    uint64_t kwOff, kwSize, offOff, offSize, postOff, postSize;
    find_section(a, SEC_KEYWORDS, &kwOff, &kwSize);
    find_section(a, SEC_LIST_OFFSETS, &offOff, &offSize);
    find_section(a, SEC_POSTINGS, &postOff, &postSize);
    uint32_t nKw = (uint32_t)(kwSize / 4), jB = UINT32_MAX;
    for (uint32_t j = 0; j < nKw && jB == UINT32_MAX; j++) /* the list of element "b": sets 0 and 1, class 2 */
        if (get32(a + kwOff + 4 * j) >= 0x80000000u && get64(a + offOff + 8 * (j + 1)) - get64(a + offOff + 8 * j) == 2)
            jB = j;
    CHECK(jB != UINT32_MAX);
    const char *zTmp = test_path("rewritten.genie");
    unsigned char *b = malloc(n);
    /* 1. the list moved to class 3: its sets have 3 elements */
    memcpy(b, a, n);
    uint32_t kw = get32(a + kwOff + 4 * jB) + 1;
    memcpy(b + kwOff + 4 * jB, &kw, 4);
    check_refused(b, n, zTmp, "size class");
    /* 2. the last keyword names an element past the vocabulary */
    memcpy(b, a, n);
    kw = 0x80000000u + 64u * 1000u;
    memcpy(b + kwOff + 4 * (nKw - 1), &kw, 4);
    check_refused(b, n, zTmp, "names element");
    /* 3. the list's second set replaced by set 3 (one element): sizes no longer match the classes */
    memcpy(b, a, n);
    uint32_t o = 3;
    memcpy(b + postOff + 4 * (get64(a + offOff + 8 * jB) + 1), &o, 4);
    check_refused(b, n, zTmp, "size class");
    free(b);
    free(a);
}
