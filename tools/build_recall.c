/*
 * The recall estimate a build of an approximate type writes beside its
 * index (INDEX.recall, docs/RECALL.md), within a time budget.
 *
 * The estimate answers hundreds of pseudo-queries exactly, which can cost
 * far more than the build itself (a word list's sequences index builds in
 * under a second and then scans every string for 1,000 pseudo-queries; an
 * input holding one 10 MB line makes each scan run for minutes), and the
 * library's exact scans cannot be interrupted.  So the estimate runs in a
 * child process: the build waits for it, shows a progress line on a
 * terminal, and at --recall-budget seconds ends it, removes what it left
 * and says so; the index itself is complete either way, and a --recall
 * search computes the estimate when it needs it.  The child only computes
 * on the CPU (the estimate's searches are the CPU backend's), so a parent
 * that used a GPU (IVF training) hands it no device state it would use.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "util/file.h"

/* The child: compute and write the estimate; its message, if any, down @p fd. */
static void child_write(const char *zIndex, int fd)
{
    genie_index *idx;
    genie_status rc = genie_index_open(zIndex, &idx);
    if (rc == GENIE_OK)
        rc = genie_recall_write(idx, 0); /* a side file that cannot be written is a failure */
    if (rc != GENIE_OK) {
        const char *z = genie_last_error();
        const char *zMsg = z[0] ? z : genie_strerror(rc);
        ssize_t w = write(fd, zMsg, strlen(zMsg));
        (void)w;
    }
    genie_index_close(idx);
    _exit(rc == GENIE_OK ? 0 : 1);
}

/* Wait for @p pid up to @p budget seconds (0: no limit); *pStatus its wait status. @return 0, or -1 past the budget. */
static int wait_within(pid_t pid, double budget, int quiet, int *pStatus)
{
    cli_progress prog;
    cli_progress_start(&prog, "recall estimate (--no-recall-estimate skips it), seconds", quiet);
    double t0 = util_now();
    unsigned us = 1000;
    for (;;) {
        pid_t r = waitpid(pid, pStatus, WNOHANG);
        if (r == pid || (r < 0 && errno != EINTR))
            break;
        double t = util_now() - t0;
        if (budget > 0 && t >= budget) {
            cli_progress_end(&prog);
            return -1;
        }
        cli_progress_update(&prog, (uint64_t)t, (uint64_t)budget);
        if (us < 100000)
            us *= 2;
        usleep(us);
    }
    cli_progress_end(&prog);
    return 0;
}

int cli_build_recall(const cli_build_args *a)
{
    /* The side file of the index this build replaced goes first: whatever
     * happens next (no estimate wanted, a failed, killed or stopped
     * computation, a full disk), no estimate of another index stays beside
     * the new one. */
    char *zSide = malloc(strlen(a->zOut) + sizeof ".recall");
    if (!zSide)
        return cli_fail(GENIE_ENOMEM);
    strcpy(zSide, a->zOut);
    strcat(zSide, ".recall");
    int st = CLI_EXIT_OK;
    if (remove(zSide) != 0 && errno != ENOENT) {
        fprintf(stderr, "genie build: cannot remove the old recall estimate %s: %s\n", zSide, strerror(errno));
        st = CLI_EXIT_FAIL;
        goto done;
    }
    if (a->noRecall)
        goto done;
    double t0 = util_now();
    int aFd[2];
    fflush(NULL);
    pid_t pid = pipe(aFd) == 0 ? fork() : -1;
    if (pid < 0) {
        fprintf(stderr, "genie build: cannot start the recall estimate: %s\n", strerror(errno));
        st = CLI_EXIT_FAIL;
        goto done;
    }
    if (pid == 0) {
        close(aFd[0]);
        child_write(a->zOut, aFd[1]);
    }
    close(aFd[1]);
    int wstatus = 0;
    if (wait_within(pid, a->recallBudget, a->quiet, &wstatus) != 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &wstatus, 0);
        close(aFd[0]);
        util_atomic_remove_stale(zSide); /* the temporary file its writer left */
        fprintf(stderr,
                "genie build: the index is written; its recall estimate was stopped at its budget of %g s "
                "(--recall-budget S, 0 for none), so %s is not written: a --recall search computes it when "
                "it needs it\n",
                a->recallBudget, zSide);
        goto done;
    }
    char zMsg[1024];
    ssize_t n = read(aFd[0], zMsg, sizeof zMsg - 1);
    zMsg[n > 0 ? n : 0] = 0;
    close(aFd[0]);
    if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
        fprintf(stderr, "genie build: the index is written, but not its recall estimate %s (each search with "
                        "--recall would compute it again): %s\n",
                zSide, zMsg[0] ? zMsg : "the computation ended abnormally");
        st = CLI_EXIT_FAIL;
    } else if (!a->quiet) {
        fprintf(stderr, "genie build: recall estimate in %.2f s (%s)\n", util_now() - t0, zSide);
    }
done:
    free(zSide);
    return st;
}
