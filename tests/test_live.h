/*
 * What the live-index tests share (test_live.c, test_live_types.c,
 * test_live_crash.c): a model of the objects a live index holds, by
 * label, in id order, and a comparison of answers with ids mapped.
 */
#ifndef GENIE_TESTS_TEST_LIVE_H
#define GENIE_TESTS_TEST_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "genie/genie.h"

typedef struct live_model {
    uint64_t *aLabel;        /* every object ever added, in id order */
    unsigned char *aAlive;   /* not deleted */
    size_t n, cap;
} live_model;

void live_model_init(live_model *m);
void live_model_add(live_model *m, uint64_t label);
/** Delete the live objects carrying @p label; @return how many. */
size_t live_model_delete(live_model *m, uint64_t label);
/** The ids of the objects not deleted, in order (malloc'd): the id map of an index of them. */
uint64_t *live_model_kept(const live_model *m, size_t *pn);
void live_model_free(live_model *m);

/**
 * Replace *@p pIdx with its refresh (genie_index_refresh), closing the
 * old one; the refresh must read on from where *pIdx was (a refresh that
 * read the log whole would hide a fault of the incremental one): the
 * test checks that the delta it made has parts and counts of its own.
 */
void test_live_refresh(genie_index **pIdx);
/** The same without the check that it read on: a refresh that may read the log whole. */
void test_live_refresh_any(genie_index **pIdx);

/** Fail unless @p got's hits are @p want's with ids mapped through @p aMap (NULL: the same ids). */
void live_same_results(const genie_results *got, const genie_results *want, const uint64_t *aMap, const char *zWhat);

#endif
