/*
 * genie_recall_prepare() and genie_recall_write() (genie.h): the estimate of an index computed by
 * the sampler of its type (recall.h), which lives with the type's search;
 * this file alone knows every approximate type's.  Vectors have two kinds
 * of index, and vectors.c says which estimate each has.
 */
#include "genie/genie.h"
#include "transform/recall.h"
#include "transform/sequences.h"
#include "transform/sets.h"
#include "transform/vectors.h"
#include "util/error.h"

/* The estimate of @p idx by its type's sampler; its side file must be written when @p mustWrite. */
static genie_status prepare(const genie_index *idx, unsigned threads, int mustWrite)
{
    util_error_clear();
    genie_index_info info;
    genie_index_get_info(idx, &info);
    if (info.type == GENIE_TYPE_VECTORS) /* LSH through vec_recall_sample, or an inverted file's own */
        return vec_recall_prepare(idx, threads, mustWrite);
    recall_sampler_fn *xSample = info.type == GENIE_TYPE_SETS        ? set_recall_sample
                                 : info.type == GENIE_TYPE_SEQUENCES ? seq_recall_sample
                                                                     : NULL;
    if (!xSample)
        return util_error(GENIE_EINVAL, "a %s index has no recall estimate (sets, sequences and vectors do)",
                          genie_index_type_name(info.type));
    const recall_estimate *e;
    return recall_get(idx, threads, xSample, mustWrite, &e);
}

genie_status genie_recall_prepare(const genie_index *idx, unsigned threads)
{
    return prepare(idx, threads, 0);
}

genie_status genie_recall_write(const genie_index *idx, unsigned threads)
{
    return prepare(idx, threads, 1);
}
