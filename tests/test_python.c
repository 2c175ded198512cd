/*
 * The Python package's pytest suite (python/tests), run by the venv that
 * scripts/setup creates (.venv), so that the one runner covers it.  The
 * suite imports the package from the source tree (PYTHONPATH) and loads
 * the libgenie.so of this build (GENIE_LIBRARY), so it tests what was
 * just built, not an older installed copy; one of its tests checks the
 * installed package as well.  A missing venv fails the test (set
 * GENIE_SKIP_PYTHON=1 to leave the suite out on purpose).
 */
#include <unistd.h>

#include "test.h"

extern char g_zTestDir[]; /* set by runner.c for the running test */

TEST(python_suite)
{
    if (getenv("GENIE_SKIP_PYTHON") && *getenv("GENIE_SKIP_PYTHON")) {
        printf("      python_suite: skipped, GENIE_SKIP_PYTHON is set\n");
        return;
    }
    const char *zRoot = GENIE_TEST_SOURCE_DIR "/..";
    char zPython[2048], zPath[2048], zLog[2048], zCmd[8192];
    snprintf(zPython, sizeof zPython, "%s/.venv/bin/python", zRoot);
    if (access(zPython, X_OK) != 0)
        test_fail_at(__FILE__, __LINE__,
                     "%s is missing: scripts/setup creates the venv (or set GENIE_SKIP_PYTHON=1)", zPython);
    snprintf(zPath, sizeof zPath, "%s/python", zRoot);
    setenv("PYTHONPATH", zPath, 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    setenv("GENIE_LIBRARY", GENIE_SHARED_LIB_PATH, 1);
    setenv("GENIE_BIN", GENIE_BIN_PATH, 1);
    setenv("TMPDIR", g_zTestDir, 1);
#ifdef GENIE_ASAN_RUNTIME
    /* Python itself is not instrumented; its allocations are not ours to check. */
    setenv("LD_PRELOAD", GENIE_ASAN_RUNTIME, 1);
    setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", 1);
#endif
    snprintf(zLog, sizeof zLog, "%s/pytest.log", g_zTestDir);
    snprintf(zCmd, sizeof zCmd, "cd '%s' && '%s' -m pytest -q -p no:cacheprovider python/tests >'%s' 2>&1", zRoot,
             zPython, zLog);
    int rc = system(zCmd);
    size_t n;
    unsigned char *zOut = test_read_file(zLog, &n);
    /* pytest's summary is its last line. */
    size_t e = n;
    while (e > 0 && zOut[e - 1] == '\n')
        e--;
    size_t b = e;
    while (b > 0 && zOut[b - 1] != '\n')
        b--;
    if (rc != 0) {
        fwrite(zOut, 1, n, stdout);
        free(zOut);
        test_fail_at(__FILE__, __LINE__, "pytest exited with status %d", rc);
    }
    printf("      python_suite: %.*s\n", (int)(e - b), (const char *)zOut + b);
    free(zOut);
}
