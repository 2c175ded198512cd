/*
 * `genie knn-graph`: every object's k nearest other objects of an index,
 * written as a file.  The entry of the index's type builds it (its
 * xCliKnnGraph: vectors indexes in tools/type_vectors_graph.c); -t TYPE
 * names the type without an index (genie knn-graph -t vectors --help) and
 * must agree with the index's.  Types without a graph are refused with the
 * list of those that have one.
 */
#include "cli.h"
#include "itype.h"

static int has_knn_graph(const itype *t)
{
    return t->xCliKnnGraph != NULL;
}

int cmd_knn_graph(int argc, char **argv)
{
    const itype *t;
    const char *zIndex;
    int st = cli_command_entry("knn-graph", &argc, argv, has_knn_graph, "no k-NN graph", &t, &zIndex);
    if (st != CLI_EXIT_OK)
        return st;
    /* No readable index and no -t: the first type with a graph parses the options (and --help), and opening
     * INDEX says what is wrong with it. */
    for (size_t i = 0; !t && i < itype_nAll; i++)
        if (itype_aAll[i] && has_knn_graph(itype_aAll[i]))
            t = itype_aAll[i];
    return t->xCliKnnGraph(argc, argv, zIndex);
}
