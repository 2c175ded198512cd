/* Crash-safe file replacement and read-only mapping (see file.h). */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"

genie_status util_atomic_open(util_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    af->fd = -1;
    size_t n = strlen(path);
    af->zPath = malloc(n + 1);
    af->zTmp = malloc(n + 16);
    if (!af->zPath || !af->zTmp) {
        free(af->zPath);
        free(af->zTmp);
        return util_error(GENIE_ENOMEM, "out of memory opening %s", path);
    }
    memcpy(af->zPath, path, n + 1);
    snprintf(af->zTmp, n + 16, "%s.tmp.XXXXXX", path);
    af->fd = mkstemp(af->zTmp);
    if (af->fd < 0) {
        genie_status rc = util_error_errno(GENIE_EIO, "cannot create a temporary file beside %s", path);
        free(af->zPath);
        free(af->zTmp);
        af->zPath = af->zTmp = NULL;
        return rc;
    }
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
    /* Make the rename itself durable. */
    char *zDir = strdup(af->zPath);
    if (zDir) {
        int dfd = open(dirname(zDir), O_RDONLY | O_DIRECTORY);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        free(zDir);
    }
    atomic_release(af);
    return GENIE_OK;
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
