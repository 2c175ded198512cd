/* The front-end builders' shared part: see frontend_builder.h. */
#include "transform/frontend_builder.h"

#include <stdlib.h>

#include "util/error.h"

genie_status fe_builder_init(fe_builder *fb, const genie_build_options *opt, size_t nKw)
{
    GENIE_TRY(fe_builder_reserve(fb, nKw));
    return genie_builder_new(&fb->b, opt);
}

genie_status fe_builder_reserve(fe_builder *fb, size_t n)
{
    if (n <= fb->nKwCap)
        return GENIE_OK;
    size_t cap = fb->nKwCap ? fb->nKwCap : 256;
    while (cap < n)
        cap *= 2;
    uint32_t *a = realloc(fb->aKw, cap * sizeof *a);
    if (!a)
        return util_error(GENIE_ENOMEM, "out of memory");
    fb->aKw = a;
    fb->nKwCap = cap;
    return GENIE_OK;
}

genie_status fe_builder_add(fe_builder *fb, size_t nKw, const char *record, size_t len)
{
    genie_object obj = {fb->aKw, nKw, 0, 0, record, len};
    return genie_builder_add(fb->b, &obj);
}

genie_status fe_builder_write(fe_builder *fb, const char *path)
{
    util_error_clear();
    return genie_builder_write(fb->b, path);
}

void fe_builder_free(fe_builder *fb)
{
    genie_builder_free(fb->b);
    free(fb->aKw);
    fb->b = NULL;
    fb->aKw = NULL;
    fb->nKwCap = 0;
}
