/* The genie command: dispatch to subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char zUsage[] =
    "Usage: genie COMMAND [options] ...\n"
    "\n"
    "A generic inverted index for batched similarity search (GENIE).\n"
    "\n"
    "Commands:\n"
    "  build    build an index from keyword sets or text documents\n"
    "  search   answer queries against an index (top-k by match count)\n"
    "  info     describe an index file\n"
    "  add      add objects to an index (its write-ahead log, docs/LIVE.md)\n"
    "  delete   delete objects of an index by label\n"
    "  compact  write an index with its log's writes applied\n"
    "  serve    keep indexes open behind an HTTP/JSON API (docs/SERVER.md)\n"
    "  eval     recall@k and queries/s of an approximate search (sets,\n"
    "           sequences, vectors) against exact answers\n"
    "  lsh-params  hash functions m by Eqn. 9 for (epsilon, delta)\n"
    "  cache-plan  the GPU list cache plan of a docs index from a query log\n"
    "\n"
    "Run 'genie COMMAND --help' for a command's options.\n"
    "Exit status: 0 ok, 1 bad input or failure, 2 usage error.\n";

/*
 * The library reads index files through a memory mapping.  A file cut
 * short under it (cp or a write in place, instead of a rename) makes the
 * next read of a page past its new end raise SIGBUS: say what happened
 * instead of dying without a word.  Catching the signal costs the search
 * nothing.
 */
static void on_sigbus(int sig)
{
    (void)sig;
    static const char z[] =
        "genie: an index file was truncated or rewritten in place while genie was reading it (SIGBUS); "
        "replace index files by renaming a new file over them, as 'genie build -o' does\n";
    ssize_t w = write(STDERR_FILENO, z, sizeof z - 1);
    (void)w;
    _exit(CLI_EXIT_FAIL);
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
    if (argc < 2) {
        fputs(zUsage, stderr);
        return CLI_EXIT_USAGE;
    }
    const char *zCmd = argv[1];
    if (strcmp(zCmd, "-h") == 0 || strcmp(zCmd, "--help") == 0 || strcmp(zCmd, "help") == 0) {
        fputs(zUsage, stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(zCmd, "--version") == 0) {
        printf("genie %s (CUDA backend %s)\n", genie_version(), genie_cuda_built() ? "built" : "not built");
        return CLI_EXIT_OK;
    }
    if (strcmp(zCmd, "build") == 0)
        return cmd_build(argc - 1, argv + 1);
    if (strcmp(zCmd, "search") == 0 || strcmp(zCmd, "eval") == 0) {
        cli_gpu_warm_start(argc - 1, argv + 1);
        int st = zCmd[0] == 's' ? cmd_search(argc - 1, argv + 1) : cmd_eval(argc - 1, argv + 1);
        cli_gpu_warm_wait();
        return st;
    }
    if (strcmp(zCmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(zCmd, "add") == 0)
        return cmd_add(argc - 1, argv + 1);
    if (strcmp(zCmd, "delete") == 0)
        return cmd_delete(argc - 1, argv + 1);
    if (strcmp(zCmd, "compact") == 0)
        return cmd_compact(argc - 1, argv + 1);
    if (strcmp(zCmd, "serve") == 0)
        return cmd_serve(argc - 1, argv + 1);
    if (strcmp(zCmd, "lsh-params") == 0)
        return vec_cli_lsh_params(argc - 1, argv + 1);
    if (strcmp(zCmd, "cache-plan") == 0)
        return docs_cli_cache_plan(argc - 1, argv + 1);
    fprintf(stderr, "genie: unknown command '%s'\n\n%s", zCmd, zUsage);
    return CLI_EXIT_USAGE;
}
