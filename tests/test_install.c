/*
 * The library as users get it: libgenie.so exports the public genie_*
 * functions alone and links no CUDA library, and `cmake --install` plus
 * pkg-config give a program what it needs to build and run against the
 * installed copy.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

/* A sanitized libgenie.so needs its runtime in the program that loads it. */
#ifdef GENIE_ASAN_RUNTIME
#define SANITIZE_FLAGS "-fsanitize=address,undefined"
#else
#define SANITIZE_FLAGS ""
#endif

extern char g_zTestDir[]; /* the running test's scratch folder (runner.c) */

/* A whole file as a NUL-terminated string (malloc'd). */
static char *read_text(const char *zPath)
{
    size_t n;
    unsigned char *p = test_read_file(zPath, &n);
    char *z = malloc(n + 1);
    CHECK(z != NULL);
    memcpy(z, p, n);
    z[n] = 0;
    free(p);
    return z;
}

/* Run a shell command; its output goes to @p zLog. @return its exit status. */
static int run(const char *zCmd, const char *zLog)
{
    size_t n = strlen(zCmd) + strlen(zLog) + 16;
    char *z = malloc(n);
    CHECK(z != NULL);
    snprintf(z, n, "(%s) >%s 2>&1", zCmd, zLog);
    int rc = system(z);
    free(z);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 255;
}

static void check_run(const char *zCmd)
{
    const char *zLog = test_path("cmd.log");
    if (run(zCmd, zLog) != 0)
        test_fail_at(__FILE__, __LINE__, "%s failed:\n%.4000s", zCmd, read_text(zLog));
}

TEST(install_exports_only_genie_symbols)
{
    const char *zOut = test_path("symbols.txt");
    char z[4096];
    snprintf(z, sizeof z, "nm -D --defined-only --format=posix '%s' | awk '{print $1}'", GENIE_SHARED_LIB_PATH);
    CHECK_EQ(run(z, zOut), 0);
    char *p = read_text(zOut);
    size_t nSym = 0;
    for (char *line = strtok(p, "\n"); line; line = strtok(NULL, "\n")) {
        if (!*line)
            continue;
        nSym++;
        if (strncmp(line, "genie_", 6) != 0 && strncmp(line, "_init", 5) != 0 && strncmp(line, "_fini", 5) != 0)
            test_fail_at(__FILE__, __LINE__, "libgenie.so exports '%s', not a genie_ name", line);
    }
    CHECK(nSym > 50); /* the public API is there */
    free(p);
    snprintf(z, sizeof z, "ldd '%s' | grep -c -E 'cudart|cublas'", GENIE_SHARED_LIB_PATH);
    CHECK(run(z, zOut) != 0); /* grep finds none */
}

/* How many symbols of @p zLib (every one nm lists, local ones too) contain "_testing". */
static long testing_symbols(const char *zLib)
{
    const char *zOut = test_path("testing.txt");
    char z[4096];
    snprintf(z, sizeof z, "nm '%s' | grep -c _testing; true", zLib);
    CHECK_EQ(run(z, zOut), 0);
    char *p = read_text(zOut);
    long n = strtol(p, NULL, 10);
    free(p);
    return n;
}

/*
 * The test hooks (GENIE_TESTING, every one named *_testing*) are in the
 * testing library alone: the libraries that are installed hold none, not
 * even as local symbols.
 */
TEST(install_release_has_no_test_hooks)
{
    CHECK(testing_symbols(GENIE_TESTING_LIB_PATH) > 0); /* the check sees hooks where there are some */
    CHECK_EQ(testing_symbols(GENIE_STATIC_LIB_PATH), 0);
    CHECK_EQ(testing_symbols(GENIE_SHARED_LIB_PATH), 0);
#ifdef GENIE_CUDA_MODULE_PATH
    CHECK_EQ(testing_symbols(GENIE_CUDA_MODULE_PATH), 0);
#endif
}

/*
 * The layout table (genie_struct_layouts) lists each public struct's
 * fields in order, without overlaps, and leaves no gap between them (or
 * after the last) that alignment padding could not explain: a field left
 * out of the table shows as a gap of its size.
 */
TEST(install_struct_layouts_complete)
{
    size_t n;
    const genie_field_layout *a = genie_struct_layouts(&n);
    CHECK(n > 100);
    size_t nStruct = 0;
    for (size_t i = 0; i < n;) {
        CHECK(a[i].field == NULL); /* a struct's own entry first */
        const char *zType = a[i].type;
        uint32_t size = a[i].size, end = 0;
        nStruct++;
        for (i++; i < n && a[i].field && strcmp(a[i].type, zType) == 0; i++) {
            if (a[i].offset < end || a[i].offset - end >= 8)
                test_fail_at(__FILE__, __LINE__, "%s.%s at %u: the fields before end at %u", zType, a[i].field,
                             a[i].offset, end);
            end = a[i].offset + a[i].size;
        }
        if (end > size || size - end >= 8)
            test_fail_at(__FILE__, __LINE__, "%s: its fields end at %u, the struct at %u", zType, end, size);
    }
    CHECK(nStruct >= 25);
}

TEST(install_pkg_config_program)
{
    const char *zPrefix = test_path("prefix");
    char z[8192];
    snprintf(z, sizeof z, "cmake --install '%s' --prefix '%s'", GENIE_BUILD_DIR, zPrefix);
    check_run(z);
    const char *zProg = test_path("prog.c");
    FILE *f = fopen(zProg, "w");
    CHECK(f != NULL);
    fputs("#include <stdio.h>\n#include <genie/genie.h>\n#include <genie/vectors.h>\n"
          "int main(void) {\n"
          "    genie_builder *b; genie_index *idx; genie_queries *q; genie_results *r;\n"
          "    uint32_t k0[] = {1, 2}, k1[] = {2, 3};\n"
          "    genie_object o0 = {k0, 2, 0, 0, NULL, 0}, o1 = {k1, 2, 0, 0, NULL, 0};\n"
          "    if (genie_builder_new(&b, NULL) || genie_builder_add(b, &o0) || genie_builder_add(b, &o1) ||\n"
          "        genie_builder_write(b, \"t.genie\")) return 1;\n"
          "    genie_builder_free(b);\n"
          "    genie_item it = {2, 3, 1};\n"
          "    genie_search_options opt = {0};\n"
          "    opt.backend = GENIE_BACKEND_CPU; opt.k = 2;\n"
          "    if (genie_index_open(\"t.genie\", &idx) || genie_queries_new(&q) || genie_queries_add(q, &it, 1, 0) ||\n"
          "        genie_search(idx, q, &opt, &r)) return 2;\n"
          "    size_t n; const genie_hit *h = genie_results_get(r, 0, &n);\n"
          "    printf(\"%s %zu %u:%u %u:%u %s\\n\", genie_version(), n, h[0].object, h[0].count, h[1].object,\n"
          "           h[1].count, genie_metric_name(GENIE_METRIC_L2));\n"
          "    genie_results_free(r); genie_queries_free(q); genie_index_close(idx);\n"
          "    return 0;\n}\n",
          f);
    fclose(f);
    snprintf(z, sizeof z,
             "cd '%s' && export PKG_CONFIG_PATH='%s/lib/pkgconfig' && "
             "cc -std=c11 -Wall -Werror %s prog.c $(pkg-config --cflags --libs genie) -Wl,-rpath,'%s/lib' -o prog && "
             "./prog > out.txt",
             g_zTestDir, zPrefix, SANITIZE_FLAGS, zPrefix);
    check_run(z);
    char *p = read_text(test_path("out.txt"));
    char zWant[128];
    snprintf(zWant, sizeof zWant, "%s 2 1:2 0:1 l2\n", genie_version());
    if (strcmp(p, zWant) != 0)
        test_fail_at(__FILE__, __LINE__, "the installed program printed '%s', expected '%s'", p, zWant);
    free(p);
    CHECK(access(test_path("prefix/bin/genie"), X_OK) == 0);
    CHECK(access(test_path("prefix/include/genie/sets.h"), R_OK) == 0);
    CHECK(access(test_path("prefix/lib/libgenie.a"), R_OK) == 0);
}
