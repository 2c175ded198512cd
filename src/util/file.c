/* Crash-safe file replacement and read-only mapping (see file.h). */
#include "util/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

/*
 * The pid in a temporary file's name "TARGET.tmp.PID.XXXXXX", or 0 when
 * @p zName is not one of @p zBase's.
 */
static pid_t stale_pid(const char *zName, const char *zBase, size_t nBase)
{
    if (strncmp(zName, zBase, nBase) != 0 || strncmp(zName + nBase, ".tmp.", 5) != 0)
        return 0;
    const char *p = zName + nBase + 5;
    long pid = 0;
    while (*p >= '0' && *p <= '9' && pid < 1L << 30)
        pid = pid * 10 + (*p++ - '0');
    if (pid <= 0 || *p != '.' || strlen(p + 1) != 6)
        return 0;
    return (pid_t)pid;
}

void util_atomic_remove_stale(const char *path)
{
    char *zDir = strdup(path), *zBase = strdup(path);
    if (!zDir || !zBase)
        goto done;
    const char *zFolder = dirname(zDir), *zName = basename(zBase);
    size_t nName = strlen(zName);
    DIR *d = opendir(zFolder);
    if (!d)
        goto done;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        pid_t pid = stale_pid(e->d_name, zName, nName);
        if (pid == 0 || kill(pid, 0) == 0 || errno != ESRCH)
            continue; /* not ours, or its writer still runs */
        /* The writer holds an flock on it while it writes: a lock we can
         * take means nobody holds the file (a pid from another pid
         * namespace sharing the folder can look dead from here). */
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
            continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0)
            unlinkat(dirfd(d), e->d_name, 0);
        close(fd);
    }
    closedir(d);
done:
    free(zDir);
    free(zBase);
}

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode)
{
    if (S_ISLNK(mode))
        return "a symbolic link";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

genie_status util_check_output(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? GENIE_OK : util_error_errno(GENIE_EIO, "cannot check the output %s", path);
    if (S_ISREG(st.st_mode))
        return GENIE_OK;
    if (S_ISLNK(st.st_mode))
        return util_error(GENIE_EINVAL,
                          "refusing to write %s: it is a symbolic link, which would be replaced (name the file it "
                          "points to instead)",
                          path);
    return util_error(GENIE_EINVAL, "refusing to write %s: it is %s, not a regular file", path,
                      file_kind(st.st_mode));
}

genie_status util_check_not_input(const char *output, const char *input)
{
    struct stat so, si;
    if (stat(output, &so) != 0)
        return GENIE_OK;
    int rc = strcmp(input, "-") == 0 ? fstat(STDIN_FILENO, &si) : stat(input, &si);
    if (rc != 0 || so.st_dev != si.st_dev || so.st_ino != si.st_ino)
        return GENIE_OK;
    if (strcmp(input, "-") == 0)
        return util_error(GENIE_EINVAL, "refusing to write %s: it is the standard input being read", output);
    return util_error(GENIE_EINVAL, "refusing to write %s: it is the input %s, which it would replace", output,
                      input);
}

genie_status genie_output_check(const char *output, const char *const *inputs, size_t n_inputs)
{
    util_error_clear();
    if (!output || (n_inputs && !inputs))
        return util_error(GENIE_EINVAL, "genie_output_check: NULL argument");
    GENIE_TRY(util_check_output(output));
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i])
            GENIE_TRY(util_check_not_input(output, inputs[i]));
    return GENIE_OK;
}

genie_status util_atomic_open(util_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
    GENIE_TRY(util_check_output(path));
    size_t n = strlen(path), nTmp = n + 40;
    af->zPath = malloc(n + 1);
    af->zTmp = malloc(nTmp);
    if (!af->zPath || !af->zTmp) {
        free(af->zPath);
        free(af->zTmp);
        return util_error(GENIE_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(af->zPath, path, n + 1);
    util_atomic_remove_stale(path);
    snprintf(af->zTmp, nTmp, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
    af->fd = mkostemp(af->zTmp, O_CLOEXEC);
    if (af->fd < 0) {
        genie_status rc = util_error_errno(GENIE_EIO, "cannot create a temporary file beside %s", path);
        free(af->zPath);
        free(af->zTmp);
        af->zPath = af->zTmp = NULL;
        return rc;
    }
    /* Marks the file as held (see util_atomic_remove_stale); released at close. */
    flock(af->fd, LOCK_EX | LOCK_NB);
    fchmod(af->fd, 0644);
    return GENIE_OK;
}

genie_status util_atomic_pwrite(util_atomic_file *af, const void *data, size_t n, uint64_t offset)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = pwrite(af->fd, p, n, (off_t)offset);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return util_error_errno(GENIE_EIO, "cannot write %s", af->zTmp);
        }
        p += w;
        n -= (size_t)w;
        offset += (uint64_t)w;
    }
    return GENIE_OK;
}

genie_status util_atomic_write(util_atomic_file *af, const void *data, size_t n)
{
    GENIE_TRY(util_atomic_pwrite(af, data, n, af->nWritten));
    af->nWritten += n;
    return GENIE_OK;
}

static void atomic_release(util_atomic_file *af)
{
    free(af->zPath);
    free(af->zTmp);
    af->zPath = af->zTmp = NULL;
    af->fd = -1;
}

genie_status util_atomic_commit(util_atomic_file *af)
{
    if (fsync(af->fd) != 0) {
        genie_status rc = util_error_errno(GENIE_EIO, "cannot fsync %s", af->zTmp);
        util_atomic_abort(af);
        return rc;
    }
    if (close(af->fd) != 0) {
        af->fd = -1;
        genie_status rc = util_error_errno(GENIE_EIO, "cannot close %s", af->zTmp);
        util_atomic_abort(af);
        return rc;
    }
    af->fd = -1;
    if (rename(af->zTmp, af->zPath) != 0) {
        genie_status rc = util_error_errno(GENIE_EIO, "cannot rename %s to %s", af->zTmp, af->zPath);
        util_atomic_abort(af);
        return rc;
    }
    util_sync_folder(af->zPath); /* the rename itself made durable */
    atomic_release(af);
    return GENIE_OK;
}

void util_sync_folder(const char *path)
{
    char *zDir = strdup(path);
    if (!zDir)
        return;
    int dfd = open(dirname(zDir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(zDir);
}

void util_atomic_abort(util_atomic_file *af)
{
    if (af->fd >= 0)
        close(af->fd);
    if (af->zTmp)
        unlink(af->zTmp);
    atomic_release(af);
}

/* Open @p path for reading, a regular file: *pFd and its size. */
static genie_status open_regular(const char *path, int *pFd, size_t *pn)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    struct stat st;
    genie_status rc = GENIE_OK;
    if (fstat(fd, &st) != 0)
        rc = util_error_errno(GENIE_EIO, "cannot stat %s", path);
    else if (!S_ISREG(st.st_mode))
        rc = util_error(GENIE_EIO, "%s is not a regular file", path);
    if (rc != GENIE_OK) {
        close(fd);
        return rc;
    }
    *pFd = fd;
    *pn = (size_t)st.st_size;
    return GENIE_OK;
}

genie_status util_map_file(const char *path, util_mapping *m)
{
    memset(m, 0, sizeof *m);
    int fd;
    size_t n;
    GENIE_TRY(open_regular(path, &fd, &n));
    if (n > 0) {
        void *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            genie_status rc = util_error_errno(GENIE_EIO, "cannot map %s", path);
            close(fd);
            return rc;
        }
        m->p = p;
        m->n = n;
    }
    close(fd);
    return GENIE_OK;
}

/* Read @p n bytes of @p fd into @p p. */
static genie_status read_whole(int fd, const char *path, unsigned char *p, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return util_error_errno(GENIE_EIO, "cannot read %s", path);
        if (r == 0) /* a file that shrank while read is no index: say so rather than validate zeros */
            return util_error(GENIE_EIO, "%s: it shrank from %zu bytes while read", path, n);
        got += (size_t)r;
    }
    return GENIE_OK;
}

genie_status util_copy_file(const char *path, util_mapping *m)
{
    memset(m, 0, sizeof *m);
    m->copied = 1;
    int fd;
    size_t n;
    GENIE_TRY(open_regular(path, &fd, &n));
    if (n == 0) {
        close(fd);
        return GENIE_OK;
    }
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return util_error(GENIE_ENOMEM, "out of memory for a copy of %s (%zu bytes)", path, n);
    }
    genie_status rc = read_whole(fd, path, p, n);
    close(fd);
    if (rc == GENIE_OK && mprotect(p, n, PROT_READ) != 0)
        rc = util_error_errno(GENIE_EIO, "cannot protect the copy of %s", path);
    if (rc != GENIE_OK) {
        munmap(p, n);
        return rc;
    }
    m->p = p;
    m->n = n;
    return GENIE_OK;
}

void util_unmap_file(util_mapping *m)
{
    if (m->p)
        munmap((void *)m->p, m->n);
    m->p = NULL;
    m->n = 0;
}
