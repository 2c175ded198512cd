/*
 * Live indexes under failure (docs/LIVE.md, "Guarantees"):
 *   - a writer killed (SIGKILL) at random moments, 100 times per type: the
 *     index always opens, every acknowledged write is there and nothing
 *     else (the write in flight when it died may be there or not, whole);
 *   - a torn last record (every cut inside it) is dropped, and reported;
 *   - a writer killed at each step of a compaction: the old file and its
 *     log, or the new file, holding the same objects either way;
 *   - a damaged log (every bit flipped, every truncation, another index's
 *     log): a clear error naming the file, or the torn tail dropped;
 *   - a full disk (a file size limit): the write is refused, the earlier
 *     ones stay, later ones go on.
 */
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/sequences.h"
#include "genie/sets.h"
#include "genie/table.h"
#include "genie/vectors.h"
#include "test.h"
#include "test_live.h"
#include "transform/live_compact.h"

/* ------------------------------------------------------------- objects */

enum { T_KEYWORDS, T_TEXT, T_SETS, T_SEQUENCES, T_TABLE, T_VECTORS, T_COUNT };
static const char *const azTypeName[] = {"keywords", "text", "sets", "sequences", "table", "vectors"};
#define DIM 4

/* The record of the object labelled @p label (also its content: keywords and vectors follow from it). */
static void object_text(int type, uint64_t label, char *z, size_t cap)
{
    static const char *const azColor[] = {"red", "green", "blue"};
    switch (type) {
    case T_TEXT: snprintf(z, cap, "word%llu common", (unsigned long long)(label % 17)); break;
    case T_SETS: snprintf(z, cap, "e%llu e%llu", (unsigned long long)(label % 11), (unsigned long long)(label % 5)); break;
    case T_SEQUENCES: snprintf(z, cap, "ab%llucd", (unsigned long long)(label % 23)); break;
    case T_TABLE: snprintf(z, cap, "%llu,%s", (unsigned long long)(label % 50), azColor[label % 3]); break;
    default: snprintf(z, cap, "%llu", (unsigned long long)label); break;
    }
}

/* A base of 20 objects labelled 0 .. 19 (their ids). */
static void build_base(int type, const char *zPath)
{
    char z[64];
    if (type == T_TABLE) {
        char zCsv[1100];
        snprintf(zCsv, sizeof zCsv, "%s.csv", zPath);
        FILE *f = fopen(zCsv, "w");
        fprintf(f, "x,color\n");
        for (uint64_t i = 0; i < 20; i++) {
            object_text(type, i, z, sizeof z);
            fprintf(f, "%s\n", z);
        }
        fclose(f);
        CHECK_OK(genie_table_build(zCsv, NULL, NULL, zPath));
        return;
    }
    if (type == T_VECTORS) {
        float a[20 * DIM];
        for (int i = 0; i < 20 * DIM; i++)
            a[i] = (float)(i % 7) - 3;
        genie_vectors v = {20, DIM, a};
        genie_lsh_params p = {.metric = GENIE_METRIC_COSINE, .m = 8, .bits = 3, .seed = 1};
        CHECK_OK(genie_vectors_build(&v, &p, NULL, zPath));
        return;
    }
    char zIn[1100];
    snprintf(zIn, sizeof zIn, "%s.txt", zPath);
    FILE *f = fopen(zIn, "w");
    for (uint64_t i = 0; i < 20; i++) {
        object_text(type, i, z, sizeof z);
        fprintf(f, "%s\n", z);
    }
    fclose(f);
    const char *azIn[] = {zIn};
    if (type == T_KEYWORDS) {
        genie_input_options in = {.type = GENIE_TYPE_KEYWORDS, .store_records = 1};
        CHECK_OK(genie_build_files(azIn, 1, &in, NULL, zPath));
    } else if (type == T_TEXT) {
        genie_input_options in = {.type = GENIE_TYPE_TEXT, .store_records = 1};
        CHECK_OK(genie_build_files(azIn, 1, &in, NULL, zPath));
    } else if (type == T_SETS) {
        genie_set_builder *sb;
        CHECK_OK(genie_set_builder_new(&sb, NULL, NULL));
        for (uint64_t i = 0; i < 20; i++) {
            object_text(type, i, z, sizeof z);
            CHECK_OK(genie_set_builder_add(sb, z, strlen(z)));
        }
        CHECK_OK(genie_set_builder_write(sb, zPath));
        genie_set_builder_free(sb);
    } else {
        genie_seq_builder *sb;
        CHECK_OK(genie_seq_builder_new(&sb, NULL, 3));
        for (uint64_t i = 0; i < 20; i++) {
            object_text(type, i, z, sizeof z);
            CHECK_OK(genie_seq_builder_add(sb, z, strlen(z)));
        }
        CHECK_OK(genie_seq_builder_write(sb, zPath));
        genie_seq_builder_free(sb);
    }
}

/* Add the objects labelled aLabel[0 .. n) through the writer of their type. */
static genie_status add_objects(genie_writer *w, int type, const uint64_t *aLabel, size_t n)
{
    char az[8][64];
    const char *azRec[8];
    size_t an[8];
    uint32_t aKw[8][2];
    genie_object ao[8];
    float aVec[8 * DIM];
    for (size_t i = 0; i < n; i++) {
        object_text(type, aLabel[i], az[i], sizeof az[i]);
        azRec[i] = az[i];
        an[i] = strlen(az[i]);
        aKw[i][0] = 0;
        aKw[i][1] = (uint32_t)(1 + aLabel[i] % 97);
        ao[i] = (genie_object){aKw[i], 2, 1, aLabel[i], az[i], an[i]};
        for (int d = 0; d < DIM; d++)
            aVec[i * DIM + d] = (float)((aLabel[i] + (uint64_t)d) % 9) - 4;
    }
    if (type == T_KEYWORDS)
        return genie_writer_add(w, ao, n, NULL);
    if (type == T_VECTORS) {
        genie_vectors v = {n, DIM, aVec};
        return genie_writer_add_vectors(w, &v, aLabel, NULL);
    }
    return genie_writer_add_records(w, azRec, an, n, aLabel, NULL);
}

/*
 * The index at @p zPath must hold exactly the model's objects (labels not
 * deleted), each with its record.  @return 1 when it does.
 */
static int holds_model(const char *zPath, int type, const live_model *m, char *zWhy, size_t nWhy)
{
    genie_index *idx;
    genie_status rc = genie_index_open(zPath, &idx);
    if (rc != GENIE_OK) {
        snprintf(zWhy, nWhy, "cannot open: %s", genie_last_error());
        return 0;
    }
    genie_index_info info;
    genie_index_get_info(idx, &info);
    size_t nAlive = 0, nWant = 0;
    for (size_t i = 0; i < m->n; i++)
        nWant += m->aAlive[i];
    int ok = 1;
    for (uint64_t o = 0; o < info.n_objects && ok; o++) {
        if (genie_index_is_deleted(idx, o))
            continue;
        nAlive++;
        uint64_t label = o; /* a file without labels (no log yet): its ids */
        if (info.has_labels && genie_index_label(idx, (uint32_t)o, &label) != GENIE_OK) {
            snprintf(zWhy, nWhy, "object %llu has no label", (unsigned long long)o);
            ok = 0;
            break;
        }
        size_t j = 0;
        while (j < m->n && !(m->aLabel[j] == label && m->aAlive[j]))
            j++;
        if (j == m->n) {
            snprintf(zWhy, nWhy, "object %llu: label %llu should not be there", (unsigned long long)o,
                     (unsigned long long)label);
            ok = 0;
            break;
        }
        const char *z;
        size_t n;
        char zWant[64];
        object_text(type, label, zWant, sizeof zWant);
        if (type != T_VECTORS && type != T_KEYWORDS &&
            (genie_index_record(idx, (uint32_t)o, &z, &n) != GENIE_OK || n != strlen(zWant) || memcmp(z, zWant, n))) {
            snprintf(zWhy, nWhy, "object %llu (label %llu): not its record", (unsigned long long)o,
                     (unsigned long long)label);
            ok = 0;
        }
    }
    if (ok && nAlive != nWant) {
        snprintf(zWhy, nWhy, "%zu objects, %zu expected", nAlive, nWant);
        ok = 0;
    }
    genie_index_close(idx);
    return ok;
}

/* ------------------------------------------------ kill -9 of a writer */

/* A message of the child writer: the write it starts (intent), or that its last one returned (ack). */
typedef struct crash_msg {
    uint32_t kind; /* 1 add, 2 delete, 3 ack */
    uint32_t n;
    uint64_t aLabel[4];
} crash_msg;

static void child_writer(const char *zPath, int type, int fd, uint64_t firstLabel, const live_model *m, uint64_t seed)
{
    genie_writer *w;
    if (genie_writer_open(zPath, &w) != GENIE_OK)
        _exit(3);
    uint64_t next = firstLabel;
    for (int op = 0; op < 1000; op++) {
        crash_msg msg;
        memset(&msg, 0, sizeof msg);
        if (op % 3 == 2 && m->n) {
            msg.kind = 2;
            msg.n = 1;
            msg.aLabel[0] = m->aLabel[test_rand(&seed) % m->n];
        } else {
            msg.kind = 1;
            msg.n = 1 + (uint32_t)(test_rand(&seed) % 4);
            for (uint32_t i = 0; i < msg.n; i++)
                msg.aLabel[i] = next++;
        }
        if (write(fd, &msg, sizeof msg) != (ssize_t)sizeof msg)
            _exit(4);
        genie_status rc = msg.kind == 1 ? add_objects(w, type, msg.aLabel, msg.n)
                                        : genie_writer_delete(w, msg.aLabel, msg.n, NULL);
        if (rc != GENIE_OK)
            _exit(5);
        memset(&msg, 0, sizeof msg);
        msg.kind = 3;
        if (write(fd, &msg, sizeof msg) != (ssize_t)sizeof msg)
            _exit(4);
    }
    genie_writer_close(w);
    _exit(0);
}

static void apply_msg(live_model *m, const crash_msg *msg)
{
    for (uint32_t i = 0; i < msg->n; i++) {
        if (msg->kind == 1)
            live_model_add(m, msg->aLabel[i]);
        else
            live_model_delete(m, msg->aLabel[i]);
    }
}

static void kill_writer_rounds(int type, int nRound)
{
    char zPath[1024];
    snprintf(zPath, sizeof zPath, "%s/%s.genie", test_path(""), azTypeName[type]);
    build_base(type, zPath);
    live_model m;
    live_model_init(&m);
    for (uint64_t i = 0; i < 20; i++)
        live_model_add(&m, i);
    uint64_t s = 77 + (uint64_t)type, nextLabel = 1000;
    int nInFlight = 0, nAckedWrites = 0;
    for (int round = 0; round < nRound; round++) {
        int fds[2];
        CHECK(pipe(fds) == 0);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            close(fds[0]);
            child_writer(zPath, type, fds[1], nextLabel, &m, test_rand(&s));
        }
        close(fds[1]);
        usleep((useconds_t)(test_rand(&s) % 3000));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status))
            test_fail_at(__FILE__, __LINE__, "%s, round %d: the writer exited with status %d", azTypeName[type], round,
                         WEXITSTATUS(status));
        /* The child's messages: acknowledged writes, and the one in flight. */
        crash_msg msg, pending;
        memset(&pending, 0, sizeof pending);
        int havePending = 0;
        while (read(fds[0], &msg, sizeof msg) == (ssize_t)sizeof msg) {
            if (msg.kind == 3) {
                apply_msg(&m, &pending);
                havePending = 0;
                nAckedWrites++;
            } else {
                pending = msg;
                havePending = 1;
                for (uint32_t i = 0; msg.kind == 1 && i < msg.n; i++)
                    nextLabel = msg.aLabel[i] + 1;
            }
        }
        close(fds[0]);
        char zWhy[256];
        if (holds_model(zPath, type, &m, zWhy, sizeof zWhy))
            continue;
        /* Else the write in flight must have made it, whole. */
        char zWhyToo[256];
        if (havePending) {
            live_model with = m;
            with.aLabel = malloc((m.n + 4) * sizeof *with.aLabel);
            with.aAlive = malloc(m.n + 4);
            with.cap = m.n + 4;
            memcpy(with.aLabel, m.aLabel, m.n * sizeof *m.aLabel);
            memcpy(with.aAlive, m.aAlive, m.n);
            apply_msg(&with, &pending);
            int ok = holds_model(zPath, type, &with, zWhyToo, sizeof zWhyToo);
            free(with.aLabel);
            free(with.aAlive);
            if (ok) {
                apply_msg(&m, &pending);
                nInFlight++;
                continue;
            }
        }
        test_fail_at(__FILE__, __LINE__, "%s, round %d: %s%s%s", azTypeName[type], round, zWhy,
                     havePending ? "; with the write in flight: " : "", havePending ? zWhyToo : "");
    }
    printf("    %s: %d kills, %d acknowledged writes, %d writes in flight found durable\n", azTypeName[type], nRound,
           nAckedWrites, nInFlight);
    live_model_free(&m);
}

TEST(live_kill_writer_keeps_acknowledged_writes)
{
    for (int type = 0; type < T_COUNT; type++)
        kill_writer_rounds(type, 100);
}

/* ----------------------------------------------------- a torn last record */

static unsigned char *read_all(const char *zPath, size_t *pn)
{
    return test_read_file(zPath, pn);
}

TEST(live_torn_last_record_dropped)
{
    char zPath[1024], zWal[1100];
    snprintf(zPath, sizeof zPath, "%s", test_path("torn.genie"));
    snprintf(zWal, sizeof zWal, "%s.wal", zPath);
    build_base(T_SETS, zPath);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zPath, &w));
    uint64_t a[] = {100, 101}, b[] = {102}, c[] = {103, 104, 105};
    CHECK_OK(add_objects(w, T_SETS, a, 2));
    CHECK_OK(add_objects(w, T_SETS, b, 1));
    size_t nBefore;
    free(read_all(zWal, &nBefore));
    CHECK_OK(add_objects(w, T_SETS, c, 3));
    genie_writer_close(w);
    size_t n;
    unsigned char *p = read_all(zWal, &n);
    live_model m;
    live_model_init(&m);
    for (uint64_t i = 0; i < 20; i++)
        live_model_add(&m, i);
    for (int i = 0; i < 3; i++)
        live_model_add(&m, 100 + (uint64_t)i);
    char zWhy[256];
    /* Every cut inside the last record, and the cut record padded with zeros (a file system's unwritten tail). */
    for (size_t cut = nBefore + 1; cut < n; cut++) {
        for (int pad = 0; pad < (cut % 4 == 0 ? 2 : 1); pad++) {
            test_write_file(zWal, p, cut);
            if (pad) {
                FILE *f = fopen(zWal, "ab");
                for (int i = 0; i < 300; i++)
                    fputc(0, f);
                fclose(f);
            }
            if (!holds_model(zPath, T_SETS, &m, zWhy, sizeof zWhy))
                test_fail_at(__FILE__, __LINE__, "cut at %zu of %zu%s: %s", cut, n, pad ? ", zeros after" : "", zWhy);
            genie_index *idx;
            CHECK_OK(genie_index_open(zPath, &idx));
            genie_live_info li;
            genie_index_live_info(idx, &li);
            CHECK(li.torn_bytes > 0);
            genie_index_close(idx);
        }
    }
    /* A writer cuts the torn record off and appends after the last whole one. */
    test_write_file(zWal, p, n - 3);
    CHECK_OK(genie_writer_open(zPath, &w));
    genie_live_info li;
    genie_index_live_info(genie_writer_index(w), &li);
    CHECK(li.torn_bytes > 0);
    uint64_t d[] = {106};
    CHECK_OK(add_objects(w, T_SETS, d, 1));
    genie_writer_close(w);
    live_model_add(&m, 106);
    CHECK(holds_model(zPath, T_SETS, &m, zWhy, sizeof zWhy));
    genie_index *idx;
    CHECK_OK(genie_index_open(zPath, &idx));
    genie_index_live_info(idx, &li);
    CHECK_EQ(li.torn_bytes, 0);
    genie_index_close(idx);
    free(p);
    live_model_free(&m);
}

/* --------------------------------------------------- a damaged log */

TEST(live_damaged_log_named_error)
{
    char zPath[1024], zWal[1100];
    snprintf(zPath, sizeof zPath, "%s", test_path("dam.genie"));
    snprintf(zWal, sizeof zWal, "%s.wal", zPath);
    build_base(T_TEXT, zPath);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zPath, &w));
    uint64_t a[] = {200, 201, 202}, del[] = {3, 201};
    CHECK_OK(add_objects(w, T_TEXT, a, 3));
    CHECK_OK(genie_writer_delete(w, del, 2, NULL));
    uint64_t b[] = {203};
    CHECK_OK(add_objects(w, T_TEXT, b, 1));
    genie_writer_close(w);
    size_t n;
    unsigned char *p = read_all(zWal, &n), *q = malloc(n);
    int nError = 0, nOpen = 0;
    /* A bit of every byte flipped (each bit position in turn). */
    for (size_t i = 0; i < n; i++)
        for (int bit = (int)(i % 8); bit == (int)(i % 8); bit++) {
            memcpy(q, p, n);
            q[i] ^= (unsigned char)(1u << bit);
            test_write_file(zWal, q, n);
            genie_index *idx;
            genie_status rc = genie_index_open(zPath, &idx);
            if (rc == GENIE_OK) {
                /* Only a flip in the last record can pass, as a torn tail. */
                genie_live_info li;
                genie_index_live_info(idx, &li);
                CHECK(li.torn_bytes > 0);
                genie_index_close(idx);
                nOpen++;
            } else {
                CHECK(rc == GENIE_ECORRUPT || rc == GENIE_EFORMAT);
                if (!strstr(genie_last_error(), zWal))
                    test_fail_at(__FILE__, __LINE__, "byte %zu bit %d: the message does not name the log: %s", i, bit,
                                 genie_last_error());
                nError++;
            }
        }
    /* Every truncation: the torn tail dropped, or (inside the header) an error naming the log. */
    for (size_t cut = 0; cut < n; cut++) {
        test_write_file(zWal, p, cut);
        genie_index *idx;
        genie_status rc = genie_index_open(zPath, &idx);
        if (rc == GENIE_OK)
            genie_index_close(idx);
        else
            CHECK(cut < 64 && strstr(genie_last_error(), zWal));
    }
    /* Another index's log. */
    char zOther[1024];
    snprintf(zOther, sizeof zOther, "%s", test_path("other.genie"));
    build_base(T_KEYWORDS, zOther);
    test_write_file(zWal, p, n);
    char zOtherWal[1100];
    snprintf(zOtherWal, sizeof zOtherWal, "%s.wal", zOther);
    test_write_file(zOtherWal, p, n);
    genie_index *idx;
    CHECK_RC(genie_index_open(zOther, &idx), GENIE_ECORRUPT);
    CHECK(strstr(genie_last_error(), "belongs to another index file") && strstr(genie_last_error(), zOtherWal));
    CHECK_RC(genie_writer_open(zOther, &w), GENIE_ECORRUPT);
    printf("    %d flips refused with the log named, %d read as a torn last record\n", nError, nOpen);
    free(p);
    free(q);
}

/* ----------------------------------------------- kill -9 in a compaction */

static int gKillAt;

static void kill_at_step(int step)
{
    if (step == gKillAt)
        raise(SIGKILL);
}

TEST(live_kill_during_compaction_old_or_new)
{
    char zPath[1024];
    snprintf(zPath, sizeof zPath, "%s", test_path("comp.genie"));
    for (int step = 0; step <= 4; step++) {
        char zWal[1100];
        snprintf(zWal, sizeof zWal, "%s.wal", zPath);
        unlink(zWal);
        build_base(T_SEQUENCES, zPath);
        live_model m;
        live_model_init(&m);
        for (uint64_t i = 0; i < 20; i++)
            live_model_add(&m, i);
        genie_writer *w;
        CHECK_OK(genie_writer_open(zPath, &w));
        uint64_t a[] = {300, 301, 302, 303}, del[] = {5, 301};
        CHECK_OK(add_objects(w, T_SEQUENCES, a, 4));
        CHECK_OK(genie_writer_delete(w, del, 2, NULL));
        genie_writer_close(w);
        for (int i = 0; i < 4; i++)
            live_model_add(&m, a[i]);
        live_model_delete(&m, 5);
        live_model_delete(&m, 301);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            gKillAt = step;
            live_testing_compact_step(kill_at_step);
            if (genie_writer_open(zPath, &w) != GENIE_OK || genie_writer_compact(w) != GENIE_OK)
                _exit(3);
            genie_writer_close(w);
            _exit(0);
        }
        int status;
        waitpid(pid, &status, 0);
        CHECK(step == 0 ? WIFEXITED(status) && WEXITSTATUS(status) == 0 : WIFSIGNALED(status));
        /* The same objects, whether from the old file and its log or from the new file. */
        char zWhy[256];
        if (!holds_model(zPath, T_SEQUENCES, &m, zWhy, sizeof zWhy))
            test_fail_at(__FILE__, __LINE__, "killed at step %d: %s", step, zWhy);
        genie_index *idx;
        CHECK_OK(genie_index_open(zPath, &idx));
        genie_live_info li;
        genie_index_live_info(idx, &li);
        int newFile = step == 0 || step >= 3;
        CHECK_EQ(li.base_objects, newFile ? 22 : 20);
        CHECK_EQ(li.added, newFile ? 0 : 4);
        genie_index_close(idx);
        /* A writer goes on from there (replacing a log the compaction left behind). */
        CHECK_OK(genie_writer_open(zPath, &w));
        uint64_t b[] = {310};
        CHECK_OK(add_objects(w, T_SEQUENCES, b, 1));
        genie_writer_close(w);
        live_model_add(&m, 310);
        if (!holds_model(zPath, T_SEQUENCES, &m, zWhy, sizeof zWhy))
            test_fail_at(__FILE__, __LINE__, "killed at step %d, then one add: %s", step, zWhy);
        live_model_free(&m);
    }
}

/* ------------------------------------------------------------ full disk */

TEST(live_full_disk_refuses_the_write)
{
    char zPath[1024], zWal[1100];
    snprintf(zPath, sizeof zPath, "%s", test_path("full.genie"));
    snprintf(zWal, sizeof zWal, "%s.wal", zPath);
    build_base(T_KEYWORDS, zPath);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zPath, &w));
    uint64_t a[] = {400, 401};
    CHECK_OK(add_objects(w, T_KEYWORDS, a, 2));
    genie_writer_close(w);
    size_t n;
    free(read_all(zWal, &n));
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        /* The log may grow by 100 bytes: a batch of 4 objects (4 x 37 bytes and more) does not fit. */
        signal(SIGXFSZ, SIG_IGN);
        if (genie_writer_open(zPath, &w) != GENIE_OK)
            _exit(3);
        struct rlimit rl = {n + 100, n + 100};
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(4);
        uint64_t big[] = {410, 411, 412, 413}, small[] = {420};
        genie_status rc = add_objects(w, T_KEYWORDS, big, 4);
        if (rc != GENIE_EIO || !strstr(genie_last_error(), "not made") || !strstr(genie_last_error(), ".wal"))
            _exit(5);
        if (add_objects(w, T_KEYWORDS, small, 1) != GENIE_OK) /* the log was cut back: this one fits */
            _exit(6);
        genie_writer_close(w);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status));
    CHECK_EQ(WEXITSTATUS(status), 0);
    live_model m;
    live_model_init(&m);
    for (uint64_t i = 0; i < 20; i++)
        live_model_add(&m, i);
    live_model_add(&m, 400);
    live_model_add(&m, 401);
    live_model_add(&m, 420);
    char zWhy[256];
    if (!holds_model(zPath, T_KEYWORDS, &m, zWhy, sizeof zWhy))
        test_fail_at(__FILE__, __LINE__, "%s", zWhy);
    live_model_free(&m);
}
