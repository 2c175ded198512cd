/*
 * The layering rule of docs/ARCHITECTURE.md kept true: scripts/include-graph
 * finds no circle of includes or of calls and no upward arrow in the tree
 * (the calls of this build's objects), and does find each in a small tree
 * made to hold them (so the check itself can fail).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"

/* Run the script on @p zRoot (the calls too with @p zBuild); its exit code, its output in @p zOut. */
static int include_graph(const char *zRoot, const char *zBuild, char *zOut, size_t nOut)
{
    char zCmd[4096];
    snprintf(zCmd, sizeof zCmd, "'%s/../scripts/include-graph' %s%s%s '%s' 2>&1", GENIE_TEST_SOURCE_DIR,
             zBuild ? "--build '" : "", zBuild ? zBuild : "", zBuild ? "'" : "", zRoot);
    FILE *p = popen(zCmd, "r");
    CHECK(p != NULL);
    size_t n = fread(zOut, 1, nOut - 1, p);
    zOut[n] = 0;
    int status = pclose(p);
    CHECK(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static void write_text(const char *zDir, const char *zName, const char *zText)
{
    char zPath[2048];
    snprintf(zPath, sizeof zPath, "%s/%s", zDir, zName);
    test_write_file(zPath, zText, strlen(zText));
}

/* Make folders @p zRoot + each of @p az, in order. */
static void make_dirs(const char *zRoot, const char *const *az, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char z[2048];
        snprintf(z, sizeof z, "%s%s", zRoot, az[i]);
        CHECK(mkdir(z, 0755) == 0);
    }
}

TEST(layout_include_graph)
{
    static char zOut[1 << 16];
    int rc = include_graph(GENIE_TEST_SOURCE_DIR "/..", GENIE_BUILD_DIR, zOut, sizeof zOut);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "scripts/include-graph exited %d:\n%s", rc, zOut);
    CHECK(strstr(zOut, "calls: no circle between files") != NULL);

    /* util -> index is upward and closes a circle; io/x.h <-> io/y.h is one. */
    const char *zRoot = test_path("tree");
    const char *azDir[] = {"", "/src", "/src/util", "/src/index", "/src/io", "/tools"};
    make_dirs(zRoot, azDir, sizeof azDir / sizeof *azDir);
    write_text(zRoot, "src/util/a.h", "#include \"index/b.h\"\n");
    write_text(zRoot, "src/index/b.h", "#include \"util/a.h\"\n");
    write_text(zRoot, "src/io/x.h", "#include \"io/y.h\"\n");
    write_text(zRoot, "src/io/y.h", "#include \"io/x.h\"\n");
    write_text(zRoot, "src/io/x.c", "#include \"io/x.h\"\n"); /* no circle: a .c is never included */
    write_text(zRoot, "tools/t.c", "#include \"index/b.h\"\n");
    /* Two objects that call each other: a circle of calls no include shows. */
    const char *azObj[] = {"/b", "/b/CMakeFiles", "/b/CMakeFiles/t.dir", "/b/CMakeFiles/t.dir/src",
                           "/b/CMakeFiles/t.dir/src/io"};
    make_dirs(zRoot, azObj, sizeof azObj / sizeof *azObj);
    write_text(zRoot, "src/io/p.c", "int io_q(int);\nint io_p(int n) { return n ? io_q(n - 1) : 0; }\n");
    write_text(zRoot, "src/io/q.c", "int io_p(int);\nint io_q(int n) { return n ? io_p(n - 1) : 1; }\n");
    char zCmd[8192], zGraph[4096];
    snprintf(zCmd, sizeof zCmd,
             "cd '%s' && cc -c src/io/p.c -o b/CMakeFiles/t.dir/src/io/p.c.o && "
             "cc -c src/io/q.c -o b/CMakeFiles/t.dir/src/io/q.c.o",
             zRoot);
    CHECK_EQ(system(zCmd), 0);
    snprintf(zGraph, sizeof zGraph, "t\t%s/b/CMakeFiles/t.dir/src/io/p.c.o;%s/b/CMakeFiles/t.dir/src/io/q.c.o\n", zRoot,
             zRoot);
    write_text(zRoot, "b/call-graph.txt", zGraph);
    char zBuild[2048];
    snprintf(zBuild, sizeof zBuild, "%s/b", zRoot);
    CHECK_EQ(include_graph(zRoot, zBuild, zOut, sizeof zOut), 1);
    CHECK(strstr(zOut, "CALL CIRCLE src/io/p.c -> (io_q) -> src/io/q.c -> (io_p) -> src/io/p.c") != NULL ||
          strstr(zOut, "CALL CIRCLE src/io/q.c -> (io_p) -> src/io/p.c -> (io_q) -> src/io/q.c") != NULL);
    CHECK(strstr(zOut, "UPWARD util -> index") != NULL);
    CHECK(strstr(zOut, "UPWARD tools -> index") != NULL);
    CHECK(strstr(zOut, "CIRCLE src/io/x.h -> src/io/y.h -> src/io/x.h") != NULL ||
          strstr(zOut, "CIRCLE src/io/y.h -> src/io/x.h -> src/io/y.h") != NULL);
    CHECK(strstr(zOut, "src/util/a.h -> src/index/b.h") != NULL || strstr(zOut, "src/index/b.h -> src/util/a.h") != NULL);
    CHECK(strstr(zOut, "CIRCLE src/io/x.c") == NULL);
}

/*
 * Every file and function a comment cites exists, and no comment cites a
 * tracker number (scripts/comment-refs); a small tree with one of each
 * kind of dangling citation is caught.
 */
TEST(layout_comment_refs)
{
    static char zOut[1 << 16];
    char zCmd[8192];
    snprintf(zCmd, sizeof zCmd, "'%s/../scripts/comment-refs' '%s/..' 2>&1", GENIE_TEST_SOURCE_DIR,
             GENIE_TEST_SOURCE_DIR);
    FILE *p = popen(zCmd, "r");
    CHECK(p != NULL);
    size_t n = fread(zOut, 1, sizeof zOut - 1, p);
    zOut[n] = 0;
    int status = pclose(p);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        test_fail_at(__FILE__, __LINE__, "scripts/comment-refs:\n%s", zOut);

    const char *zRoot = test_path("tree");
    char z[2048];
    snprintf(z, sizeof z, "%s/src", zRoot);
    CHECK(mkdir(zRoot, 0755) == 0 && mkdir(z, 0755) == 0);
    write_text(zRoot, "src/a.c",
               "/* See b.c and gone.c; calls util_gone() and a_here(); engine_vanished; issue 7. */\n"
               "int a_here(void);\nint a_here(void) { return 0; }\n");
    write_text(zRoot, "src/b.c", "int b(void);\n");
    snprintf(zCmd, sizeof zCmd, "cd '%s' && '%s/../scripts/comment-refs' . 2>&1", zRoot, GENIE_TEST_SOURCE_DIR);
    p = popen(zCmd, "r");
    CHECK(p != NULL);
    n = fread(zOut, 1, sizeof zOut - 1, p);
    zOut[n] = 0;
    status = pclose(p);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
    CHECK(strstr(zOut, "src/a.c:1: file gone.c does not exist") != NULL);
    CHECK(strstr(zOut, "function util_gone() is nowhere") != NULL);
    CHECK(strstr(zOut, "engine_vanished is nowhere") != NULL);
    CHECK(strstr(zOut, "tracker number (issue 7)") != NULL);
    CHECK(strstr(zOut, "b.c does not") == NULL && strstr(zOut, "a_here") == NULL);
    CHECK(strstr(zOut, "4 dangling citation(s)") != NULL);
}

