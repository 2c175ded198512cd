/* Printing search answers (see search_output.h). */
#include "search_output.h"

#include <stdio.h>

#include "cli.h"

static void put_json_string(const char *s, size_t n)
{
    putchar('"');
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

/* The index that holds @p object, and the object's id in it. */
static const genie_index *locate(const search_output *o, uint32_t object, uint32_t *pLocal)
{
    if (o->xLocate)
        return o->xLocate(o->pLocateCtx, object, pLocal);
    *pLocal = object;
    return o->idx;
}

static int get_label(const search_output *o, uint32_t object, uint64_t *pLabel)
{
    uint32_t local;
    const genie_index *idx = locate(o, object, &local);
    return o->hasLabels && idx && genie_index_label(idx, local, pLabel) == GENIE_OK;
}

static int get_record(const search_output *o, uint32_t object, const char **pRec, size_t *pN)
{
    uint32_t local;
    const genie_index *idx = locate(o, object, &local);
    return idx && genie_index_record(idx, local, pRec, pN) == GENIE_OK;
}

static void print_hit_tsv(const search_output *o, uint64_t queryNo, size_t rank, const genie_hit *h)
{
    printf("%llu\t%zu\t%u\t", (unsigned long long)queryNo, rank, h->object);
    uint64_t label;
    if (get_label(o, h->object, &label))
        printf("%llu", (unsigned long long)label);
    else
        putchar('-');
    printf("\t%u", h->count);
    const char *rec;
    size_t n;
    if (o->show) {
        putchar('\t');
        if (get_record(o, h->object, &rec, &n))
            cli_put_escaped(rec, n);
    }
    putchar('\n');
}

static void print_query_json(const search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n,
                             int partial)
{
    printf("{\"query\":%llu,%s\"hits\":[", (unsigned long long)queryNo, partial ? "\"partial\":true," : "");
    for (size_t r = 0; r < n; r++) {
        printf("%s{\"rank\":%zu,\"object\":%u,\"label\":", r ? "," : "", r + 1, aHit[r].object);
        uint64_t label;
        if (get_label(o, aHit[r].object, &label))
            printf("%llu", (unsigned long long)label);
        else
            fputs("null", stdout);
        printf(",\"count\":%u", aHit[r].count);
        const char *rec;
        size_t len;
        if (o->show && get_record(o, aHit[r].object, &rec, &len)) {
            fputs(",\"record\":", stdout);
            put_json_string(rec, len);
        }
        putchar('}');
    }
    fputs("]}\n", stdout);
}

void search_output_query(const search_output *o, uint64_t queryNo, const genie_hit *aHit, size_t n, int partial)
{
    if (o->json)
        print_query_json(o, queryNo, aHit, n, partial);
    else
        for (size_t i = 0; i < n; i++)
            print_hit_tsv(o, queryNo, i + 1, &aHit[i]);
}

void search_output_results(const search_output *o, const genie_results *r, uint64_t firstQueryNo)
{
    for (size_t q = 0; q < genie_results_queries(r); q++) {
        size_t n;
        const genie_hit *aHit = genie_results_get(r, q, &n);
        search_output_query(o, firstQueryNo + q, aHit, n, 0);
    }
}
