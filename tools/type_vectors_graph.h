/*
 * `genie knn-graph` of a vectors index (tools/type_vectors_graph.c): the
 * vectors entry's xCliKnnGraph, and its options and help for the entry's
 * cliKnnGraph (VEC_KNN_GRAPH_CLI, as cli.h's CLI_EVAL_LINES).
 */
#ifndef GENIE_TOOLS_TYPE_VECTORS_GRAPH_H
#define GENIE_TOOLS_TYPE_VECTORS_GRAPH_H

#include "cli.h"

int vec_cli_knn_graph(int argc, char **argv, const char *zIndex);

#define VEC_KNN_GRAPH_SHORT "k:o:K:qh" CLI_ENGINE_SHORT_OPTIONS
extern const struct option vec_aKnnGraphOption[];
extern const char vec_zKnnGraphHelp[];
#define VEC_KNN_GRAPH_CLI {VEC_KNN_GRAPH_SHORT, vec_aKnnGraphOption, vec_zKnnGraphHelp}

#endif
