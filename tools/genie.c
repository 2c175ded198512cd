/* The genie command: dispatch to subcommands. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "itype.h"

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

/* The commands (genie.c alone links genie serve). */
static const struct {
    const char *zName;
    int (*xCmd)(int argc, char **argv);
} aCmd[] = {{"build", cmd_build},   {"search", cmd_search},   {"info", cmd_info},
            {"add", cmd_add},       {"delete", cmd_delete},   {"compact", cmd_compact},
            {"serve", cmd_serve},   {"eval", cmd_eval},       {"knn-graph", cmd_knn_graph},
            {"lsh-params", vec_cli_lsh_params},
            {"cache-plan", docs_cli_cache_plan}};

static int find_command(const char *zName)
{
    for (size_t i = 0; i < sizeof aCmd / sizeof *aCmd; i++)
        if (strcmp(aCmd[i].zName, zName) == 0)
            return (int)i;
    return -1;
}

/*
 * genie help [TYPE | COMMAND]: genie --help without an argument; a type's
 * options (the --help of its build, search and, where it has them, eval
 * and knn-graph, from its entry); or a command's --help.
 */
static int cmd_help(int argc, char **argv)
{
    if (argc < 2 || cli_wants_help(argc, argv)) {
        cli_print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 2)
        return cli_usage_error("help", "expected one TYPE or COMMAND");
    const itype *t = itype_by_name(argv[1]);
    if (t) {
        const itype_cli *aCli[] = {&t->cliBuild, &t->cliSearch, &t->cliEval, &t->cliKnnGraph};
        for (size_t i = 0; i < sizeof aCli / sizeof *aCli; i++)
            if (aCli[i]->zHelp) {
                if (i)
                    putchar('\n');
                cli_help(aCli[i]->zHelp);
            }
        return CLI_EXIT_OK;
    }
    int iCmd = find_command(argv[1]);
    if (iCmd >= 0) {
        char zHelp[] = "--help";
        char *av[] = {argv[1], zHelp, NULL};
        return aCmd[iCmd].xCmd(2, av);
    }
    char zTypes[160];
    return cli_usage_error("help", "'%s' is neither a type (%s) nor a command", argv[1],
                           itype_names(zTypes, sizeof zTypes, NULL));
}

int main(int argc, char **argv)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigbus;
    sigaction(SIGBUS, &sa, NULL);
    if (argc < 2) {
        cli_print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *zCmd = argv[1];
    if (strcmp(zCmd, "-h") == 0 || strcmp(zCmd, "--help") == 0) {
        cli_print_usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(zCmd, "--version") == 0) {
        printf("genie %s (CUDA backend %s)\n", genie_version(), genie_cuda_built() ? "built" : "not built");
        return CLI_EXIT_OK;
    }
    if (strcmp(zCmd, "help") == 0)
        return cmd_help(argc - 1, argv + 1);
    int iCmd = find_command(zCmd);
    if (iCmd < 0) {
        fprintf(stderr, "genie: unknown command '%s'\n\n", zCmd);
        cli_print_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    /* search, eval and knn-graph start the GPU while the index opens (gpu_warm.c) */
    int warm = aCmd[iCmd].xCmd == cmd_search || aCmd[iCmd].xCmd == cmd_eval || aCmd[iCmd].xCmd == cmd_knn_graph;
    if (warm)
        cli_gpu_warm_start(argc - 1, argv + 1);
    int st = aCmd[iCmd].xCmd(argc - 1, argv + 1);
    if (warm)
        cli_gpu_warm_wait();
    return st;
}
