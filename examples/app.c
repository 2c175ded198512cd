/*
 * A program of your own against the installed library (README, "Building
 * by hand"): search a keyword index for one query made of the keywords on
 * the command line, and print the top 5 objects by match count.
 *
 *   cc -o app examples/app.c $(pkg-config --cflags --libs genie)
 *   ./app sets.genie 3 7 12
 */
#include <stdio.h>
#include <stdlib.h>

#include <genie/genie.h>

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s INDEX KEYWORD...\n", argv[0]);
        return 2;
    }
    genie_index *idx = NULL;
    genie_queries *q = NULL;
    genie_results *r = NULL;
    genie_item items[64];
    size_t n_items = 0;
    for (int i = 2; i < argc && n_items < 64; i++) {
        uint32_t kw = (uint32_t)strtoul(argv[i], NULL, 10);
        items[n_items++] = (genie_item){kw, kw, 1}; /* the range [kw, kw], weight 1 */
    }
    genie_status rc = genie_index_open(argv[1], &idx);
    if (rc == GENIE_OK)
        rc = genie_queries_new(&q);
    if (rc == GENIE_OK)
        rc = genie_queries_add(q, items, n_items, 0);
    genie_search_options opt = {0};
    opt.k = 5; /* backend 0: auto, the GPU when there is one */
    if (rc == GENIE_OK)
        rc = genie_search(idx, q, &opt, &r);
    if (rc != GENIE_OK) {
        fprintf(stderr, "app: %s\n", genie_last_error());
        return 1;
    }
    size_t n;
    const genie_hit *hit = genie_results_get(r, 0, &n);
    for (size_t i = 0; i < n; i++)
        printf("object %u shares %u keywords\n", hit[i].object, hit[i].count);
    genie_results_free(r);
    genie_queries_free(q);
    genie_index_close(idx);
    return 0;
}
