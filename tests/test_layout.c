/*
 * The layering rule of DESIGN.md kept true: scripts/include-graph finds no
 * circle and no upward arrow in the tree, and does find both in a small
 * tree made to hold them (so the check itself can fail).
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include "test.h"

/* Run the script on @p zRoot; its exit code, its output in @p zOut. */
static int include_graph(const char *zRoot, char *zOut, size_t nOut)
{
    char zCmd[4096];
    snprintf(zCmd, sizeof zCmd, "'%s/../scripts/include-graph' '%s' 2>&1", GENIE_TEST_SOURCE_DIR, zRoot);
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

TEST(layout_include_graph)
{
    static char zOut[1 << 16];
    int rc = include_graph(GENIE_TEST_SOURCE_DIR "/..", zOut, sizeof zOut);
    if (rc != 0)
        test_fail_at(__FILE__, __LINE__, "scripts/include-graph exited %d:\n%s", rc, zOut);

    /* util -> index is upward and closes a circle; io/x.h <-> io/y.h is one. */
    const char *zRoot = test_path("tree");
    const char *azDir[] = {"", "/src", "/src/util", "/src/index", "/src/io", "/tools"};
    for (size_t i = 0; i < sizeof azDir / sizeof *azDir; i++) {
        char z[2048];
        snprintf(z, sizeof z, "%s%s", zRoot, azDir[i]);
        CHECK(mkdir(z, 0755) == 0);
    }
    write_text(zRoot, "src/util/a.h", "#include \"index/b.h\"\n");
    write_text(zRoot, "src/index/b.h", "#include \"util/a.h\"\n");
    write_text(zRoot, "src/io/x.h", "#include \"io/y.h\"\n");
    write_text(zRoot, "src/io/y.h", "#include \"io/x.h\"\n");
    write_text(zRoot, "src/io/x.c", "#include \"io/x.h\"\n"); /* no circle: a .c is never included */
    write_text(zRoot, "tools/t.c", "#include \"index/b.h\"\n");
    CHECK_EQ(include_graph(zRoot, zOut, sizeof zOut), 1);
    CHECK(strstr(zOut, "UPWARD util -> index") != NULL);
    CHECK(strstr(zOut, "UPWARD tools -> index") != NULL);
    CHECK(strstr(zOut, "CIRCLE src/io/x.h -> src/io/y.h -> src/io/x.h") != NULL ||
          strstr(zOut, "CIRCLE src/io/y.h -> src/io/x.h -> src/io/y.h") != NULL);
    CHECK(strstr(zOut, "src/util/a.h -> src/index/b.h") != NULL || strstr(zOut, "src/index/b.h -> src/util/a.h") != NULL);
    CHECK(strstr(zOut, "CIRCLE src/io/x.c") == NULL);
}
