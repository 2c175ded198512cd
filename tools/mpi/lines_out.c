/* The broker's standard output in whole queries (see lines_out.h). */
#include "lines_out.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whole queries are written once this many bytes of them are held. */
#define LINES_OUT_CHUNK (64u << 10)

/* The memory stream's write function: append to the buffer. */
static ssize_t mem_write(void *cookie, const char *p, size_t n)
{
    lines_out *o = cookie;
    if (o->nBuf + n > o->nCap) {
        size_t cap = o->nCap ? o->nCap : 2 * LINES_OUT_CHUNK;
        while (cap < o->nBuf + n)
            cap *= 2;
        char *a = realloc(o->aBuf, cap);
        if (!a) {
            o->failed = 1;
            errno = ENOMEM;
            return -1;
        }
        o->aBuf = a;
        o->nCap = cap;
    }
    memcpy(o->aBuf + o->nBuf, p, n);
    o->nBuf += n;
    return (ssize_t)n;
}

int lines_out_open(lines_out *o, const char *zFile)
{
    memset(o, 0, sizeof *o);
    o->pStdout = stdout;
    if (zFile) {
        if (util_atomic_open(&o->af, zFile) != GENIE_OK) {
            fprintf(stderr, "genie-mpi: cannot write %s: %s\n", zFile, genie_last_error());
            return -1;
        }
        o->toFile = 1;
    }
    cookie_io_functions_t fns = {NULL, mem_write, NULL, NULL};
    o->pMem = fopencookie(o, "w", fns);
    if (!o->pMem) {
        fprintf(stderr, "genie-mpi: out of memory for the output\n");
        if (o->toFile)
            util_atomic_abort(&o->af);
        return -1;
    }
    setvbuf(o->pMem, NULL, _IOFBF, LINES_OUT_CHUNK);
    stdout = o->pMem;
    return 0;
}

/* Write the whole queries held, aBuf[0 .. nDone), to the target. */
static void write_done(lines_out *o)
{
    if (o->nDone == 0 || o->failed)
        return;
    if (o->toFile) {
        if (util_atomic_write(&o->af, o->aBuf, o->nDone) != GENIE_OK) {
            fprintf(stderr, "genie-mpi: %s\n", genie_last_error());
            o->failed = 1;
        }
    } else {
        /* Pieces of whole lines of at most PIPE_BUF bytes: a pipe (mpirun's, a consumer's) takes each whole
         * or not at all, so a kill while it is full cannot cut a line (a longer line goes in several). */
        int fd = fileno(o->pStdout);
        for (size_t at = 0; at < o->nDone && !o->failed;) {
            size_t n = o->nDone - at;
            if (n > PIPE_BUF) {
                n = PIPE_BUF;
                while (n > 0 && o->aBuf[at + n - 1] != '\n')
                    n--;
                if (n == 0)
                    n = PIPE_BUF;
            }
            for (size_t done = 0; done < n;) {
                ssize_t w = write(fd, o->aBuf + at + done, n - done);
                if (w < 0 && errno == EINTR)
                    continue;
                if (w <= 0) {
                    fprintf(stderr, "genie-mpi: cannot write the results: %s\n", strerror(errno));
                    o->failed = 1;
                    break;
                }
                done += (size_t)w;
            }
            at += n;
        }
    }
    memmove(o->aBuf, o->aBuf + o->nDone, o->nBuf - o->nDone);
    o->nBuf -= o->nDone;
    o->nDone = 0;
}

int lines_out_query_end(lines_out *o)
{
    if (!o->pMem)
        return 0;
    if (fflush(o->pMem) != 0)
        o->failed = 1;
    o->nDone = o->nBuf;
    if (o->nDone >= LINES_OUT_CHUNK)
        write_done(o);
    return o->failed ? -1 : 0;
}

void lines_out_flush(lines_out *o)
{
    write_done(o); /* what a query began after its last end stays behind */
}

int lines_out_close(lines_out *o, int commit)
{
    if (!o->pMem)
        return 0; /* never opened */
    stdout = o->pStdout;
    write_done(o); /* whole queries only: a query cut short by a failure stays out */
    fclose(o->pMem);
    free(o->aBuf);
    int failed = o->failed;
    if (o->toFile) {
        if (commit && !failed) {
            if (util_atomic_commit(&o->af) != GENIE_OK) {
                fprintf(stderr, "genie-mpi: %s\n", genie_last_error());
                failed = 1;
            }
        }
        util_atomic_abort(&o->af); /* after a commit: frees only */
    }
    memset(o, 0, sizeof *o);
    return failed ? -1 : 0;
}
