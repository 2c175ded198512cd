/*
 * The List of Clusters of one share of a metric index's objects: the
 * local index of a processor under the strategy LL of Gil-Costa, Marin
 * and Reyes, "Parallel query processing on distributed clustering
 * indexes" (J. Discrete Algorithms 7, 2009), section 4.2, where the
 * objects are spread evenly over the processors and each builds an LC of
 * its own with centers chosen among its own objects.
 *
 * The share is every stride-th object from offset, in id order, so the
 * processor maps its local object i back to offset + i * stride with no
 * table.  The objects come from the index itself (its stored vectors or
 * records), so every processor needs only the one index file.
 */
#include <stdlib.h>
#include <string.h>

#include "transform/metric.h"
#include "util/error.h"

genie_status genie_lc_build_share(const genie_index *idx, uint32_t stride, uint32_t offset, const genie_lc_params *p,
                                  const genie_build_options *opt, const char *path)
{
    util_error_clear();
    if (!p)
        return util_error(GENIE_EINVAL, "no build parameters");
    lc_layout L;
    lc_space s;
    GENIE_TRY(lc_open_index(idx, &L, &s));
    genie_status rc = GENIE_OK;
    genie_vectors v = {0, 0, NULL};
    const char **az = NULL;
    size_t *an = NULL;
    uint64_t n = L.info.n_objects, nShare = stride > offset && offset < n ? (n - offset + stride - 1) / stride : 0;
    if (nShare == 0) {
        rc = util_error(GENIE_EINVAL, "share %u of %u of an index of %llu objects is empty or undefined", offset,
                        stride, (unsigned long long)n);
        goto done;
    }
    genie_lc_params q = *p;
    q.metric = L.info.metric;
    q.separator = L.info.separator;
    if (lc_metric_is_vector(L.info.metric)) {
        size_t dim = L.info.dim;
        if (!(v.data = malloc((size_t)nShare * dim * sizeof *v.data))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for a share of %llu vectors", (unsigned long long)nShare);
            goto done;
        }
        for (uint64_t i = 0; i < nShare; i++)
            memcpy(v.data + i * dim, s.aVec + (offset + i * stride) * dim, dim * sizeof *v.data);
        v.n = nShare;
        v.dim = (uint32_t)dim;
        rc = genie_lc_build_vectors(&v, &q, opt, path);
    } else {
        if (!(az = malloc((size_t)nShare * sizeof *az)) || !(an = malloc((size_t)nShare * sizeof *an))) {
            rc = util_error(GENIE_ENOMEM, "out of memory for a share of %llu objects", (unsigned long long)nShare);
            goto done;
        }
        for (uint64_t i = 0; i < nShare; i++) {
            az[i] = s.azStr[offset + i * stride];
            an[i] = s.anStr[offset + i * stride];
        }
        rc = genie_lc_build_strings(az, an, (size_t)nShare, &q, opt, path);
    }
done:
    free(v.data);
    free(az);
    free(an);
    lc_space_free(&s);
    return rc;
}
