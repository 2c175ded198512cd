/* genie info: describe an index file. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

static const char zHelp[] =
    "Usage: genie info INDEX\n"
    "\n"
    "Validate INDEX (every checksum, count and offset) and print what it\n"
    "holds, one 'key: value' per line.\n"
    "\n"
    "  -h, --help   show this help\n";

int cmd_info(int argc, char **argv)
{
    static const struct option aOpt[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", aOpt, NULL)) != -1) {
        if (c == 'h') {
            fputs(zHelp, stdout);
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
    genie_index_close(idx);
    return CLI_EXIT_OK;
}
