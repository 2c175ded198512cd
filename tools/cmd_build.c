/* genie build: the type's entry builds (-t TYPE; keywords without -t). */
#include "cli.h"
#include "itype.h"

int cmd_build(int argc, char **argv)
{
    const char *zType = cli_find_type_arg(argc, argv);
    const itype *t = zType ? itype_by_name(zType) : NULL;
    /* No -t, or an unknown name: the keywords build, which says what -t takes. */
    if (!t)
        t = itype_by_type(GENIE_TYPE_KEYWORDS);
    return t->xCliBuild(argc, argv);
}
