/*
 * genie build: the type's entry builds (-t TYPE; keywords without -t).
 * Without -t, --help is the overview of every type (cli_types.c).
 */
#include "cli.h"
#include "itype.h"

int cmd_build(int argc, char **argv)
{
    const char *zType = cli_find_type_arg(argc, argv);
    const itype *t = zType ? itype_by_name(zType) : itype_by_type(GENIE_TYPE_KEYWORDS);
    if (!t)
        return cli_unknown_type("build", zType);
    if (!zType && cli_wants_help(argc, argv)) {
        cli_print_build_overview();
        return CLI_EXIT_OK;
    }
    return t->xCliBuild(argc, argv);
}
