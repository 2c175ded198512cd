/*
 * The front-end commands: `genie build --type T` and `genie search` on an
 * index of type T hand over to the front-end's own build and search
 * functions (tools/type_<T>.c), because each data type has options of its
 * own (hash functions, n-gram length, bins, re-ranking).  cmd_build.c and
 * cmd_search.c keep the keyword and text types.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

const cli_frontend cli_aFrontend[] = {
    {"metric", GENIE_TYPE_METRIC, lc_cli_build, lc_cli_search},
    {"sequences", GENIE_TYPE_SEQUENCES, seq_cli_build, seq_cli_search},
    {"sets", GENIE_TYPE_SETS, set_cli_build, set_cli_search},
    {"table", GENIE_TYPE_TABLE, table_cli_build, table_cli_search},
    {"vectors", GENIE_TYPE_VECTORS, vec_cli_build, vec_cli_search},
    {"docs", GENIE_TYPE_DOCS, docs_cli_build, docs_cli_search},
    {NULL, GENIE_TYPE_KEYWORDS, NULL, NULL}};

const cli_frontend *cli_frontend_by_name(const char *zType)
{
    for (const cli_frontend *f = cli_aFrontend; f->zType; f++)
        if (strcmp(f->zType, zType) == 0)
            return f;
    return NULL;
}

const cli_frontend *cli_frontend_by_type(genie_index_type type)
{
    for (const cli_frontend *f = cli_aFrontend; f->zType; f++)
        if (f->type == type)
            return f;
    return NULL;
}

const char *cli_find_type_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if ((strcmp(argv[i], "-t") == 0 || strcmp(argv[i], "--type") == 0) && i + 1 < argc)
            return argv[i + 1];
        if (strncmp(argv[i], "--type=", 7) == 0)
            return argv[i] + 7;
        if (strncmp(argv[i], "-t", 2) == 0 && argv[i][2])
            return argv[i] + 2;
    }
    return NULL;
}

const char *cli_find_index_arg(int argc, char **argv, genie_index_type *pType)
{
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-')
            continue;
        if (genie_index_file_type(argv[i], pType) == GENIE_OK)
            return argv[i];
    }
    return NULL;
}
