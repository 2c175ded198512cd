/* The genie command: dispatch to subcommands. */
#include <stdio.h>
#include <string.h>

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
    "  eval     recall@k and approximation ratio of a vectors index\n"
    "  lsh-params  hash functions m by Eqn. 9 for (epsilon, delta)\n"
    "  cache-plan  the GPU list cache plan of a docs index from a query log\n"
    "\n"
    "Run 'genie COMMAND --help' for a command's options.\n"
    "Exit status: 0 ok, 1 bad input or failure, 2 usage error.\n";

int main(int argc, char **argv)
{
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
    if (strcmp(zCmd, "search") == 0)
        return cmd_search(argc - 1, argv + 1);
    if (strcmp(zCmd, "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(zCmd, "eval") == 0)
        return vec_cli_eval(argc - 1, argv + 1);
    if (strcmp(zCmd, "lsh-params") == 0)
        return vec_cli_lsh_params(argc - 1, argv + 1);
    if (strcmp(zCmd, "cache-plan") == 0)
        return docs_cli_cache_plan(argc - 1, argv + 1);
    fprintf(stderr, "genie: unknown command '%s'\n\n%s", zCmd, zUsage);
    return CLI_EXIT_USAGE;
}
