/*
 * Live indexes across threads and processes (docs/LIVE.md, "Guarantees"):
 * threads of one writer (group commit) lose and duplicate nothing; a
 * reader process that opens the index sees every write acknowledged
 * before its open; a second writer process is refused with GENIE_EBUSY
 * (and `genie add` with exit status 1 and the message); a snapshot
 * (genie_index_refresh) sees the writes acknowledged before it, shares
 * the file with the index it came from and outlives it.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "genie/text.h"
#include "index/index.h"
#include "index/live.h"
#include "index/wal.h"
#include "test.h"
#include "test_live.h"

/* A keywords index of @p n objects (labels = ids), object i holding keywords i % 7 and 100 + i % 3. */
static void build_keywords(const char *zPath, size_t n)
{
    genie_builder *b;
    CHECK_OK(genie_builder_new(&b, NULL));
    for (size_t i = 0; i < n; i++) {
        uint32_t aKw[2] = {(uint32_t)(i % 7), 100 + (uint32_t)(i % 3)};
        genie_object o = {aKw, 2, 0, 0, NULL, 0};
        CHECK_OK(genie_builder_add(b, &o));
    }
    CHECK_OK(genie_builder_write(b, zPath));
    genie_builder_free(b);
}

/* Whether @p idx holds an object with @p label that is not deleted. */
static int holds_label(const genie_index *idx, uint64_t label)
{
    genie_index_info info;
    genie_index_get_info(idx, &info);
    genie_filter *f;
    CHECK_OK(genie_filter_new(&f, info.n_objects));
    size_t nFound = 0;
    CHECK_OK(genie_filter_allow_labels(f, idx, &label, 1, &nFound));
    int alive = 0;
    for (uint64_t o = 0; o < info.n_objects; o++)
        if (genie_filter_get(f, o) && !genie_index_is_deleted(idx, o))
            alive = 1;
    genie_filter_free(f);
    return alive;
}

/* ------------------------------------------------------------ threads */

enum { THREADS = 6, ADDS_PER_THREAD = 40 };

typedef struct add_job {
    genie_writer *w;
    int t;
    uint64_t aLabel[ADDS_PER_THREAD];
    genie_status rc;
} add_job;

static void *add_thread(void *p)
{
    add_job *j = p;
    for (int i = 0; i < ADDS_PER_THREAD && j->rc == GENIE_OK; i++) {
        uint32_t aKw[2] = {(uint32_t)(50 + j->t), (uint32_t)(200 + i)};
        genie_object o = {aKw, 2, 0, 0, NULL, 0};
        j->rc = genie_writer_add(j->w, &o, 1, &j->aLabel[i]);
    }
    return NULL;
}

/* Threads of one process adding at once: every object lands once, with a label of its own. */
TEST(live_writer_threads_add_at_once)
{
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("threads.genie"));
    build_keywords(zIndex, 50);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    add_job aJob[THREADS];
    pthread_t aThread[THREADS];
    for (int t = 0; t < THREADS; t++) {
        aJob[t] = (add_job){.w = w, .t = t, .rc = GENIE_OK};
        CHECK_EQ(pthread_create(&aThread[t], NULL, add_thread, &aJob[t]), 0);
    }
    for (int t = 0; t < THREADS; t++)
        pthread_join(aThread[t], NULL);
    genie_writer_close(w);
    for (int t = 0; t < THREADS; t++)
        CHECK_OK(aJob[t].rc);
    genie_index *idx;
    CHECK_OK(genie_index_open(zIndex, &idx));
    genie_index_info info;
    genie_index_get_info(idx, &info);
    CHECK_EQ(info.n_objects, 50 + THREADS * ADDS_PER_THREAD);
    /* Each label once, on the object the thread added: its keywords say which thread and which add. */
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < ADDS_PER_THREAD; i++) {
            uint64_t label = aJob[t].aLabel[i];
            CHECK(label >= 50);
            int nSame = 0;
            for (uint32_t o = 50; o < info.n_objects; o++) {
                uint64_t l;
                CHECK_OK(genie_index_label(idx, o, &l));
                nSame += l == label;
            }
            CHECK_EQ(nSame, 1);
        }
    /* And a search finds each thread's objects by its keyword. */
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    for (int t = 0; t < THREADS; t++) {
        genie_item it = {(uint32_t)(50 + t), (uint32_t)(50 + t), 1};
        CHECK_OK(genie_queries_add(q, &it, 1, 1));
    }
    genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, 1000);
    for (int t = 0; t < THREADS; t++) {
        size_t n;
        genie_results_get(r, (size_t)t, &n);
        CHECK_EQ(n, ADDS_PER_THREAD);
    }
    genie_results_free(r);
    genie_queries_free(q);
    genie_index_close(idx);
}

/* ---------------------------------------------------------- processes */

/* The child: add one object at a time and, once each add returned, write its label to @p fd. */
static void child_adder(const char *zIndex, int fd, int nAdd)
{
    genie_writer *w;
    if (genie_writer_open(zIndex, &w) != GENIE_OK)
        _exit(3);
    for (int i = 0; i < nAdd; i++) {
        uint32_t aKw[2] = {7, (uint32_t)(300 + i)};
        genie_object o = {aKw, 2, 0, 0, NULL, 0};
        uint64_t label;
        if (genie_writer_add(w, &o, 1, &label) != GENIE_OK)
            _exit(4);
        if (write(fd, &label, sizeof label) != (ssize_t)sizeof label)
            _exit(5);
    }
    genie_writer_close(w);
    _exit(0);
}

/*
 * Item 5 of the live indexes: a reader process that opens the index while
 * another process writes sees every write that process acknowledged
 * before the open (and maybe later ones, never a torn one).
 */
TEST(live_reader_process_sees_acknowledged_writes)
{
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("procs.genie"));
    build_keywords(zIndex, 20);
    int aPipe[2];
    CHECK_EQ(pipe(aPipe), 0);
    enum { ADDS = 120 };
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(aPipe[0]);
        child_adder(zIndex, aPipe[1], ADDS);
    }
    close(aPipe[1]);
    uint64_t aAcked[ADDS];
    int nAcked = 0, nOpen = 0;
    while (nAcked < ADDS) {
        ssize_t k = read(aPipe[0], &aAcked[nAcked], sizeof aAcked[0]);
        if (k != (ssize_t)sizeof aAcked[0])
            break;
        nAcked++;
        if (nAcked % 7 != 0)
            continue;
        /* Open now, the writer still writing: every acknowledged label is there. */
        genie_index *idx;
        CHECK_OK(genie_index_open(zIndex, &idx));
        for (int i = 0; i < nAcked; i++)
            CHECK(holds_label(idx, aAcked[i]));
        genie_index_close(idx);
        nOpen++;
    }
    close(aPipe[0]);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK_EQ(nAcked, ADDS);
    printf("    %d opens while another process wrote, each holding every write acknowledged before it\n", nOpen);
}

/* The child: hold the writer until told to go (a byte on @p fdGo), having said so on @p fdReady. */
static void child_holder(const char *zIndex, int fdReady, int fdGo)
{
    genie_writer *w;
    if (genie_writer_open(zIndex, &w) != GENIE_OK)
        _exit(3);
    char c = 1;
    if (write(fdReady, &c, 1) != 1 || read(fdGo, &c, 1) != 1)
        _exit(4);
    genie_writer_close(w);
    _exit(0);
}

/* Item 5: one writer per index across processes; the second gets GENIE_EBUSY, genie add exit status 1. */
TEST(live_second_writer_process_refused)
{
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("two.genie"));
    build_keywords(zIndex, 10);
    int aReady[2], aGo[2];
    CHECK_EQ(pipe(aReady), 0);
    CHECK_EQ(pipe(aGo), 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        close(aReady[0]);
        close(aGo[1]);
        child_holder(zIndex, aReady[1], aGo[0]);
    }
    close(aReady[1]);
    close(aGo[0]);
    char c;
    CHECK_EQ(read(aReady[0], &c, 1), 1);
    genie_writer *w = NULL;
    CHECK_RC(genie_writer_open(zIndex, &w), GENIE_EBUSY);
    CHECK(strstr(genie_last_error(), "is being written by another process"));
    /* The command line says the same, exit status 1. */
    const char *zAdd = test_path("add.txt"), *zErr = test_path("add.err");
    FILE *f = fopen(zAdd, "w");
    CHECK(f);
    fputs("1 2 3\n", f);
    fclose(f);
    char zCmd[4096];
    snprintf(zCmd, sizeof zCmd, "'%s' add -q '%s' '%s' >/dev/null 2>'%s'", GENIE_BIN_PATH, zIndex, zAdd, zErr);
    int st = system(zCmd);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 1);
    size_t n;
    char *zMsg = (char *)test_read_file(zErr, &n);
    CHECK(strstr(zMsg, "is being written by another process"));
    free(zMsg);
    /* Readers need no lock: opening works while the writer holds it. */
    genie_index *idx;
    CHECK_OK(genie_index_open(zIndex, &idx));
    genie_index_close(idx);
    CHECK_EQ(write(aGo[1], &c, 1), 1);
    int status;
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    /* Once it is gone, the next writer gets the lock. */
    CHECK_OK(genie_writer_open(zIndex, &w));
    genie_writer_close(w);
    close(aReady[0]);
    close(aGo[1]);
}

/* ----------------------------------------------------------- snapshots */

/* One query: keyword 7 (base objects i % 7 == 0, and what the tests add). */
static size_t hits_of_keyword(const genie_index *idx, uint32_t kw)
{
    genie_queries *q;
    CHECK_OK(genie_queries_new(&q));
    genie_item it = {kw, kw, 1};
    CHECK_OK(genie_queries_add(q, &it, 1, 1));
    genie_results *r = test_search(idx, q, GENIE_BACKEND_CPU, 100000);
    size_t n;
    genie_results_get(r, 0, &n);
    genie_results_free(r);
    genie_queries_free(q);
    return n;
}

TEST(live_refresh_snapshot_shares_the_file)
{
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("snap.genie"));
    build_keywords(zIndex, 70); /* keyword 3: 10 objects */
    genie_index *a;
    CHECK_OK(genie_index_open_copy(zIndex, &a));
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    uint32_t aKw[1] = {3};
    genie_object o[4];
    for (int i = 0; i < 4; i++)
        o[i] = (genie_object){aKw, 1, 0, 0, NULL, 0};
    uint64_t aLabel[4];
    CHECK_OK(genie_writer_add(w, o, 4, aLabel));
    uint64_t del = 3; /* object 3, keyword 3 */
    CHECK_OK(genie_writer_delete(w, &del, 1, NULL));
    /* The first snapshot is what was opened; the refresh sees the writes. */
    CHECK_EQ(hits_of_keyword(a, 3), 10);
    genie_index *b;
    CHECK_OK(genie_index_refresh(a, &b));
    CHECK_EQ(hits_of_keyword(b, 3), 13);
    genie_live_info li;
    genie_index_live_info(b, &li);
    CHECK(li.live && li.added == 4 && li.deleted == 1);
    /* The older one may go first: the file stays with b, and b refreshes in turn. */
    genie_index_close(a);
    CHECK_OK(genie_writer_add(w, o, 2, aLabel));
    genie_index *c;
    CHECK_OK(genie_index_refresh(b, &c));
    CHECK_EQ(hits_of_keyword(b, 3), 13);
    CHECK_EQ(hits_of_keyword(c, 3), 15);
    CHECK(holds_label(c, aLabel[1]) && !holds_label(b, aLabel[1]));
    genie_index_close(b);
    CHECK_EQ(hits_of_keyword(c, 3), 15);
    /* After a compaction the file is another: a refresh says to open it again. */
    CHECK_OK(genie_writer_compact(w));
    genie_index *d = NULL;
    CHECK_RC(genie_index_refresh(c, &d), GENIE_EFORMAT);
    CHECK(strstr(genie_last_error(), "open it again"));
    CHECK_EQ(hits_of_keyword(c, 3), 15); /* c still searches the file it read */
    genie_index_close(c);
    genie_writer_close(w);
    CHECK_OK(genie_index_open(zIndex, &d));
    CHECK_EQ(hits_of_keyword(d, 3), 15);
    genie_index_close(d);
}

/*
 * A refresh after a log that gained words and no objects (a text add that
 * failed after its WORDS record): the words are in the index opened
 * afresh, so the refresh reads the log whole rather than keep the delta
 * whose vocabulary lacks them.
 */
TEST(live_refresh_words_without_objects)
{
    char zIndex[1024];
    snprintf(zIndex, sizeof zIndex, "%s", test_path("words.genie"));
    unlink(test_path("words.genie.wal"));
    genie_text_builder *tb;
    CHECK_OK(genie_text_builder_new(&tb, NULL, NULL, 0, 1));
    CHECK_OK(genie_text_builder_add(tb, "a cat", 5));
    CHECK_OK(genie_text_builder_write(tb, zIndex));
    genie_text_builder_free(tb);
    genie_writer *w;
    CHECK_OK(genie_writer_open(zIndex, &w));
    const char *azDoc[] = {"a zebra"};
    size_t anDoc[] = {7};
    CHECK_OK(genie_writer_add_records(w, azDoc, anDoc, 1, NULL, NULL));
    genie_writer_close(w);
    genie_index *snap;
    CHECK_OK(genie_index_open(zIndex, &snap)); /* a delta with "zebra" */
    /* A WORDS record alone, appended as the writer appends it. */
    genie_index *base;
    CHECK_OK(genie_index_open(zIndex, &base));
    wal_base wb = wal_base_of(base->map.p, base->map.n);
    genie_index_close(base);
    char *zWal = live_wal_path(zIndex);
    wal_writer *ww;
    CHECK_OK(wal_writer_open(zIndex, zWal, &wb, &ww));
    unsigned char aWord[4 + 6] = {6, 0, 0, 0, 'o', 'k', 'a', 'p', 'i', 's'};
    CHECK_OK(wal_append(ww, WAL_WORDS, 1, aWord, sizeof aWord));
    wal_writer_close(ww);
    free(zWal);
    test_live_refresh_any(&snap);
    genie_index *fresh;
    CHECK_OK(genie_index_open(zIndex, &fresh));
    uint32_t kwSnap, kwFresh;
    CHECK_OK(genie_index_word(fresh, "okapis", 6, &kwFresh));
    CHECK_OK(genie_index_word(snap, "okapis", 6, &kwSnap));
    CHECK_EQ(kwSnap, kwFresh);
    CHECK_OK(genie_index_word(snap, "zebra", 5, &kwSnap));
    genie_index_close(fresh);
    genie_index_close(snap);
}
