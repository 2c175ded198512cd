/*
 * The keywords and text front-ends' file input: reading data files into an
 * index (genie_build_files) and query files into query sets
 * (genie_query_reader_*), with errors that name the file, the line and the
 * token.  The parsing itself is io/records.c and io/parse.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "genie/genie.h"
#include "genie/text.h"
#include "io/parse.h"
#include "io/records.h"
#include "util/error.h"
#include "util/options.h"

/* Either builder, behind one pair of calls. */
typedef struct any_builder {
    genie_builder *b;
    genie_text_builder *tb;
} any_builder;

static genie_status add_record(any_builder *ab, const genie_input_options *in, io_records *r, io_u32s *kw)
{
    if (ab->tb)
        return genie_text_builder_add(ab->tb, r->aRec, r->nRec);
    char zWhere[512];
    snprintf(zWhere, sizeof zWhere, "%s:%llu", r->zPath, (unsigned long long)r->iRecLine);
    uint64_t label = 0;
    GENIE_TRY(io_parse_keywords(r->aRec, r->nRec, zWhere, kw, in->labels ? &label : NULL));
    genie_object obj = {kw->a, kw->n, in->labels, label, in->store_records ? r->aRec : NULL, r->nRec};
    genie_status rc = genie_builder_add(ab->b, &obj);
    if (rc != GENIE_OK && rc != GENIE_ENOMEM) {
        char zMsg[512];
        snprintf(zMsg, sizeof zMsg, "%s", genie_last_error());
        return util_error(rc, "%s: %s", zWhere, zMsg);
    }
    return rc;
}

static genie_status read_input(any_builder *ab, const char *path, const genie_input_options *in, io_u32s *kw)
{
    io_records r;
    GENIE_TRY(io_records_open(&r, path, in->type == GENIE_TYPE_TEXT ? in->delimiter : NULL));
    genie_status rc = GENIE_OK;
    int more;
    while ((more = io_records_next(&r)) > 0) {
        rc = add_record(ab, in, &r, kw);
        if (rc != GENIE_OK)
            break;
    }
    if (more < 0)
        rc = more;
    io_records_close(&r);
    return rc;
}

void genie_input_options_init(genie_input_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->size = sizeof *opt;
}

genie_status genie_build_files(const char *const *inputs, size_t n_inputs, const genie_input_options *in,
                               const genie_build_options *opt, const char *output)
{
    util_error_clear();
    GENIE_TRY(UTIL_OPTIONS_CHECK(in, genie_input_options, n_stop_words));
    if (n_inputs == 0)
        return util_error(GENIE_EINVAL, "no input files");
    if (in->type != GENIE_TYPE_KEYWORDS && in->type != GENIE_TYPE_TEXT)
        return util_error(GENIE_EINVAL, "unknown input type %d", (int)in->type);
    if (in->delimiter && in->type != GENIE_TYPE_TEXT)
        return util_error(GENIE_EINVAL, "a record delimiter applies to text input only");
    GENIE_TRY(genie_output_check(output, inputs, n_inputs));
    any_builder ab = {NULL, NULL};
    io_u32s kw = {NULL, 0, 0};
    genie_status rc;
    if (in->type == GENIE_TYPE_TEXT)
        rc = genie_text_builder_new(&ab.tb, opt, in->stop_words, in->n_stop_words, in->store_records);
    else
        rc = genie_builder_new(&ab.b, opt);
    for (size_t i = 0; rc == GENIE_OK && i < n_inputs; i++)
        rc = read_input(&ab, inputs[i], in, &kw);
    if (rc == GENIE_OK) {
        uint64_t n = ab.tb ? genie_text_builder_count(ab.tb) : genie_builder_count(ab.b);
        if (n == 0)
            rc = util_error(GENIE_EINVAL, "%s%s: no objects to index (empty input)", inputs[0],
                            n_inputs > 1 ? " and the other inputs" : "");
    }
    if (rc == GENIE_OK)
        rc = ab.tb ? genie_text_builder_write(ab.tb, output) : genie_builder_write(ab.b, output);
    genie_text_builder_free(ab.tb);
    genie_builder_free(ab.b);
    free(kw.a);
    return rc;
}

/* --------------------------------------------------------------- queries */

struct genie_query_reader {
    io_records r;
    const genie_index *idx;
    int text;
    io_items items;
};

genie_status genie_query_reader_open(genie_query_reader **out, const char *path, const genie_index *idx,
                                     const char *delimiter)
{
    util_error_clear();
    *out = NULL;
    genie_index_info info;
    genie_index_get_info(idx, &info);
    int text = info.type == GENIE_TYPE_TEXT;
    if (delimiter && !text)
        return util_error(GENIE_EINVAL, "a record delimiter applies to text queries only");
    genie_query_reader *qr = calloc(1, sizeof *qr);
    if (!qr)
        return util_error(GENIE_ENOMEM, "out of memory");
    genie_status rc = io_records_open(&qr->r, path, text ? delimiter : NULL);
    if (rc != GENIE_OK) {
        free(qr);
        return rc;
    }
    qr->idx = idx;
    qr->text = text;
    *out = qr;
    return GENIE_OK;
}

genie_status genie_query_reader_read(genie_query_reader *qr, genie_queries *q, size_t max, uint32_t min_count,
                                     size_t *n_read)
{
    util_error_clear();
    *n_read = 0;
    while (*n_read < max) {
        int more = io_records_next(&qr->r);
        if (more < 0)
            return more;
        if (more == 0)
            break;
        char zWhere[512];
        snprintf(zWhere, sizeof zWhere, "%s:%llu", qr->r.zPath, (unsigned long long)qr->r.iRecLine);
        if (qr->text) {
            GENIE_TRY(genie_queries_add_text(q, qr->idx, qr->r.aRec, qr->r.nRec, min_count));
        } else {
            GENIE_TRY(io_parse_items(qr->r.aRec, qr->r.nRec, zWhere, &qr->items));
            GENIE_TRY(genie_queries_add(q, qr->items.a, qr->items.n, min_count));
        }
        (*n_read)++;
    }
    return GENIE_OK;
}

void genie_query_reader_close(genie_query_reader *qr)
{
    if (!qr)
        return;
    io_records_close(&qr->r);
    free(qr->items.a);
    free(qr);
}
