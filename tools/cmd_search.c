/*
 * genie search: the entry of the index's type searches (keywords when no
 * index is found: opening INDEX says what is wrong).  -t TYPE names the
 * type without an index (genie search -t TYPE --help) and must agree with
 * the index's; --help with neither is the overview of every type
 * (cli_types.c).
 */
#include "cli.h"
#include "itype.h"

int cmd_search(int argc, char **argv)
{
    const itype *t;
    const char *zIndex;
    int st = cli_command_entry("search", &argc, argv, NULL, NULL, &t, &zIndex);
    if (st != CLI_EXIT_OK)
        return st;
    if (!t && cli_wants_help(argc, argv)) {
        cli_print_search_overview();
        return CLI_EXIT_OK;
    }
    if (!t)
        t = itype_by_type(GENIE_TYPE_KEYWORDS);
    return t->xCliSearch(argc, argv, zIndex);
}
