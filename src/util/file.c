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

genie_status util_atomic_open(util_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
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

genie_status util_map_file(const char *path, util_mapping *m)
{
    m->p = NULL;
    m->n = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return util_error_errno(GENIE_EIO, "cannot open %s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        genie_status rc = util_error_errno(GENIE_EIO, "cannot stat %s", path);
        close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return util_error(GENIE_EIO, "%s is not a regular file", path);
    }
    if (st.st_size > 0) {
        void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            genie_status rc = util_error_errno(GENIE_EIO, "cannot map %s", path);
            close(fd);
            return rc;
        }
        m->p = p;
        m->n = (size_t)st.st_size;
    }
    close(fd);
    return GENIE_OK;
}

void util_unmap_file(util_mapping *m)
{
    if (m->p)
        munmap((void *)m->p, m->n);
    m->p = NULL;
    m->n = 0;
}
