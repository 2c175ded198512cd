/* genie info: describe an index file. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "itype.h"

static const char zHelp[] =
    "Usage: genie info INDEX\n"
    "\n"
    "Validate INDEX (every checksum, count and offset) and print what it\n"
    "holds, one 'key: value' per line.  'parts' is the number of parts the\n"
    "index was cut into (genie build --part-objects / --part-bytes); each\n"
    "part then has a line 'part.P: ids FIRST-LAST postings N keywords N\n"
    "bytes N' (keywords: distinct within the part; bytes: its sections in the\n"
    "file).  With several parts longest_list is the longest within a part.\n"
    "Sets, sequences and vectors indexes also get 'recall_estimate': the\n"
    "recall@k that the stored estimate (INDEX.recall, see genie search\n"
    "--recall) predicts for one k and K (sets k 10, K 100;\n"
    "sequences k 1, K 32, one figure per modelled edit rate, 10% to 50%;\n"
    "vectors k 10, K 100, radius 0), 'none' without a valid estimate, or\n"
    "why the file was rejected.  A vectors index gets 'default_recall', the\n"
    "recall@k its searches given no K, radius, nprobe or target meet\n"
    "(genie build --recall; 0.9 by default); an inverted file (--ivf) gets\n"
    "'ivf' (its kind, metric, lists, product quantizer, training) and\n"
    "'default_nprobe' and 'default_refine', the build's choice for an\n"
    "estimated recall@10 of default_recall.  An index with a write-ahead\n"
    "log (genie add, genie delete; docs/LIVE.md) gets 'log': its size and\n"
    "the objects it added and deleted; 'objects' then counts the added ones\n"
    "too, the parts are the file's.\n"
    "\n"
    "  -h, --help   show this help\n";

/* Sequences: the prediction of each edit level (curve c: queries with (c + 1) * 10% edits); @p r0 is level 0's. */
static void print_sequence_levels(const genie_index *idx, uint32_t k, uint32_t K, double r0, uint32_t nSample)
{
    printf("recall_estimate: recall@%u at K = %u: %.4f (10%% edits)", k, K, r0);
    double r;
    for (uint32_t c = 1; genie_recall_predict(idx, k, K, c, &r, NULL) == GENIE_OK; c++)
        printf(", %.4f (%u%%)", r, (c + 1) * 10);
    printf(" (%u pseudo-queries each)\n", nSample);
}

void cli_print_recall_estimate(const genie_index *idx, const char *zPath, uint32_t k, uint32_t K, int perEditRate)
{
    uint32_t nSample;
    double r;
    genie_status rrc = genie_recall_predict(idx, k, K, 0, &r, &nSample);
    if (rrc != GENIE_OK)
        printf("recall_estimate: rejected: %s\n", genie_last_error());
    else if (r < 0)
        printf("recall_estimate: none (no %s.recall: genie build writes it, as does a first --recall search)\n", zPath);
    else if (perEditRate)
        print_sequence_levels(idx, k, K, r, nSample);
    else
        printf("recall_estimate: recall@%u %.4f at K = %u (%u pseudo-queries)\n", k, r, K, nSample);
}

int cmd_info(int argc, char **argv)
{
    static const struct option aOpt[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", aOpt, NULL)) != -1) {
        if (c == 'h') {
            cli_help(zHelp);
            return CLI_EXIT_OK;
        }
        return cli_usage_error("info", "bad option");
    }
    if (optind + 1 != argc)
        return cli_usage_error("info", "expected exactly one INDEX");
    genie_index *idx;
    genie_status rc = genie_index_open(argv[optind], &idx);
    if (rc != GENIE_OK)
        return cli_fail(rc);
    genie_index_info i;
    genie_index_get_info(idx, &i);
    printf("file: %s\n", argv[optind]);
    printf("format_version: %u\n", i.format_version);
    printf("file_size: %llu\n", (unsigned long long)i.file_size);
    printf("type: %s\n", genie_index_type_name(i.type));
    printf("objects: %llu\n", (unsigned long long)i.n_objects);
    printf("postings: %llu\n", (unsigned long long)i.n_postings);
    printf("keywords: %llu\n", (unsigned long long)i.n_keywords);
    printf("longest_list: %llu\n", (unsigned long long)i.longest_list);
    printf("max_object_length: %u\n", i.max_object_length);
    printf("sublist_length: %u\n", i.sublist_length);
    printf("sublists: %llu\n", (unsigned long long)i.n_sublists);
    printf("vocabulary_words: %llu\n", (unsigned long long)i.n_words);
    printf("labels: %s\n", i.has_labels ? "yes" : "no");
    printf("records: %s\n", i.has_records ? "yes" : "no");
    genie_live_info li;
    genie_index_live_info(idx, &li);
    if (li.live)
        printf("log: %llu bytes: %llu objects added, %llu deleted (the file holds %llu)%s\n",
               (unsigned long long)li.log_bytes, (unsigned long long)li.added, (unsigned long long)li.deleted,
               (unsigned long long)li.base_objects, li.torn_bytes ? "; a torn last record dropped" : "");
    uint32_t nParts = genie_index_parts(idx);
    printf("parts: %u\n", nParts);
    for (uint32_t p = 0; p < nParts; p++) {
        genie_part_info pi;
        genie_index_part_info(idx, p, &pi);
        printf("part.%u: ids %llu-%llu postings %llu keywords %llu bytes %llu\n", p,
               (unsigned long long)pi.first_object,
               (unsigned long long)(pi.first_object + pi.n_objects - (pi.n_objects ? 1 : 0)),
               (unsigned long long)pi.n_postings, (unsigned long long)pi.n_keywords, (unsigned long long)pi.bytes);
    }
    const itype *t = itype_by_type(i.type);
    int st = t && t->xCliInfo ? t->xCliInfo(idx, argv[optind]) : CLI_EXIT_OK;
    genie_index_close(idx);
    return st;
}
