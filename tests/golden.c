/* Loading and running golden CLI cases (see golden.h). */
#include "golden.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

typedef struct golden_case {
    char *zName;
    char *zFile;
    int iFileFirst; /* first case of the same file */
    char *zCmd;
    char *zStdin, *zStdout; /* joined lines, each ending in \n */
    char **azStderr;
    int nStderr;
    int exitCode;
} golden_case;

static golden_case *aCase;
static int nCase;

static char *append_line(char *z, const char *line)
{
    size_t a = z ? strlen(z) : 0, b = strlen(line);
    char *r = realloc(z, a + b + 2);
    if (!r)
        abort();
    memcpy(r + a, line, b);
    r[a + b] = '\n';
    r[a + b + 1] = '\0';
    return r;
}

static int load_file(const char *path, const char *base)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "cannot read %s\n", path);
        return -1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int first = nCase, lineNo = 0;
    golden_case *c = NULL;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineNo++;
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        if (strncmp(line, "### ", 4) == 0) {
            aCase = realloc(aCase, (size_t)(nCase + 1) * sizeof *aCase);
            c = &aCase[nCase++];
            memset(c, 0, sizeof *c);
            size_t len = strlen(base) + strlen(line + 4) + 16;
            c->zName = malloc(len);
            snprintf(c->zName, len, "golden/%s: %s", base, line + 4);
            c->zFile = strdup(path);
            c->iFileFirst = first;
        } else if (n == 0 || line[0] == '#') {
            continue;
        } else if (!c) {
            fprintf(stderr, "%s:%d: text before the first '### name'\n", path, lineNo);
            return -1;
        } else if (strncmp(line, "$ ", 2) == 0) {
            c->zCmd = strdup(line + 2);
        } else if (line[0] == '<') {
            c->zStdin = append_line(c->zStdin, line[1] == ' ' ? line + 2 : line + 1);
        } else if (line[0] == '>') {
            c->zStdout = append_line(c->zStdout, line[1] == ' ' ? line + 2 : line + 1);
        } else if (strncmp(line, "! ", 2) == 0) {
            c->azStderr = realloc(c->azStderr, (size_t)(c->nStderr + 1) * sizeof *c->azStderr);
            c->azStderr[c->nStderr++] = strdup(line + 2);
        } else if (strncmp(line, "exit ", 5) == 0) {
            c->exitCode = atoi(line + 5);
        } else {
            fprintf(stderr, "%s:%d: unknown line '%s'\n", path, lineNo, line);
            return -1;
        }
    }
    free(line);
    fclose(f);
    for (int i = first; i < nCase; i++) {
        if (!aCase[i].zCmd) {
            fprintf(stderr, "%s: case '%s' has no '$ command'\n", path, aCase[i].zName);
            return -1;
        }
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int golden_load(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "cannot open %s\n", dir);
        return -1;
    }
    char **azFile = NULL;
    int nFile = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".test") == 0) {
            azFile = realloc(azFile, (size_t)(nFile + 1) * sizeof *azFile);
            azFile[nFile++] = strdup(e->d_name);
        }
    }
    closedir(d);
    qsort(azFile, (size_t)nFile, sizeof *azFile, cmp_str);
    int rc = 0;
    for (int i = 0; i < nFile && rc == 0; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, azFile[i]);
        rc = load_file(path, azFile[i]);
    }
    for (int i = 0; i < nFile; i++)
        free(azFile[i]);
    free(azFile);
    return rc < 0 ? -1 : nCase;
}

const char *golden_name(int i)
{
    return aCase[i].zName;
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *z = malloc((size_t)n + 1);
    size_t r = fread(z, 1, (size_t)n, f);
    z[r] = '\0';
    fclose(f);
    return z;
}

/* Run one command with the case's stdin; returns its exit status. */
static int run_command(const golden_case *c, const char *zOut, const char *zErr)
{
    char zIn[1100];
    snprintf(zIn, sizeof zIn, "%s", test_path(".stdin"));
    FILE *f = fopen(zIn, "w");
    if (!f)
        test_fail_at(__FILE__, __LINE__, "cannot write %s", zIn);
    if (c->zStdin)
        fputs(c->zStdin, f);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("GENIE", GENIE_BIN_PATH, 1);
        setenv("DATA", GENIE_TEST_SOURCE_DIR "/golden/data", 1);
        setenv("TMP", test_path(""), 1);
        if (!freopen(zIn, "r", stdin) || !freopen(zOut, "w", stdout) || !freopen(zErr, "w", stderr))
            _exit(127);
        execl("/bin/sh", "sh", "-c", c->zCmd, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void golden_run(int i)
{
    const golden_case *c = &aCase[i];
    char zOut[1100], zErr[1100];
    snprintf(zOut, sizeof zOut, "%s", test_path(".stdout"));
    snprintf(zErr, sizeof zErr, "%s", test_path(".stderr"));
    for (int j = c->iFileFirst; j < i; j++)
        run_command(&aCase[j], zOut, zErr);
    int code = run_command(c, zOut, zErr);
    char *zGotOut = read_file(zOut), *zGotErr = read_file(zErr);
    const char *zWant = c->zStdout ? c->zStdout : "";
    if (strcmp(zGotOut, zWant) != 0)
        test_fail_at(c->zFile, 0, "%s\n--- expected stdout:\n%s--- got stdout:\n%s--- stderr:\n%s", c->zCmd, zWant,
                     zGotOut, zGotErr);
    for (int k = 0; k < c->nStderr; k++)
        if (!strstr(zGotErr, c->azStderr[k]))
            test_fail_at(c->zFile, 0, "%s\nstderr lacks '%s'; got:\n%s", c->zCmd, c->azStderr[k], zGotErr);
    if (code != c->exitCode)
        test_fail_at(c->zFile, 0, "%s\nexit %d, expected %d; stderr:\n%s", c->zCmd, code, c->exitCode, zGotErr);
    free(zGotOut);
    free(zGotErr);
}
