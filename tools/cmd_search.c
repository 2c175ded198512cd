/* genie search: the entry of the index's type searches (keywords when no index is found). */
#include "cli.h"
#include "itype.h"

int cmd_search(int argc, char **argv)
{
    genie_index_type type;
    const char *zIndex = cli_find_index_arg(argc, argv, &type);
    const itype *t = zIndex ? itype_by_type(type) : NULL;
    /* Without a readable index the keywords search reports what is wrong (or its --help). */
    if (!t)
        t = itype_by_type(GENIE_TYPE_KEYWORDS);
    return t->xCliSearch(argc, argv, zIndex);
}
