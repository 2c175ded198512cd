/*
 * genie search: the entry of the index's type searches (keywords when no
 * index is found: opening INDEX says what is wrong).  -t TYPE names the
 * type without an index (genie search -t TYPE --help) and must agree with
 * the index's; --help with neither is the overview of every type
 * (cli_types.c).
 */
#include <stdio.h>

#include "cli.h"
#include "itype.h"

int cmd_search(int argc, char **argv)
{
    const itype *tNamed;
    int st = cli_take_type_arg("search", &argc, argv, &tNamed);
    if (st != CLI_EXIT_OK)
        return st;
    genie_index_type type;
    const char *zIndex = cli_find_index_arg(argc, argv, &type);
    const itype *t = zIndex ? itype_by_type(type) : tNamed;
    if (zIndex && tNamed && t != tNamed) {
        fprintf(stderr, "genie search: %s is a %s index, not %s (-t)\n", zIndex, t ? t->zName : "unknown",
                tNamed->zName);
        return CLI_EXIT_FAIL;
    }
    if (!t && cli_wants_help(argc, argv)) {
        cli_print_search_overview();
        return CLI_EXIT_OK;
    }
    if (!t)
        t = itype_by_type(GENIE_TYPE_KEYWORDS);
    return t->xCliSearch(argc, argv, zIndex);
}
