/*
 * cuBLAS opened on first use: see blas_gpu.h.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "engine/cuda/common/blas_gpu.h"

extern "C" {
#include "util/error.h"
}

#ifndef GENIE_CUBLAS_SONAME
#error "the build sets GENIE_CUBLAS_SONAME (libcublas.so.<CUDA major version>)"
#endif

static pthread_once_t gOnce = PTHREAD_ONCE_INIT;
static gpu_blas gBlas;
static int gLoaded;
static char gzWhy[512];

/* Look up @p zName in @p h into *pFn; 0 (and gzWhy) when it is missing. */
template <typename F> static int blas_sym(void *h, const char *zName, F *pFn)
{
    *pFn = (F)dlsym(h, zName);
    if (!*pFn)
        snprintf(gzWhy, sizeof gzWhy, "%s has no %s", GENIE_CUBLAS_SONAME, zName);
    return *pFn != NULL;
}

static void blas_load(void)
{
    void *h = dlopen(GENIE_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *z = dlerror();
        snprintf(gzWhy, sizeof gzWhy, "cannot open %s: %s", GENIE_CUBLAS_SONAME, z ? z : "unknown error");
        return;
    }
    gLoaded = blas_sym(h, "cublasCreate_v2", &gBlas.create) && blas_sym(h, "cublasDestroy_v2", &gBlas.destroy) &&
              blas_sym(h, "cublasSetStream_v2", &gBlas.setStream) && blas_sym(h, "cublasSgemm_v2", &gBlas.sgemm) &&
              blas_sym(h, "cublasGemmEx", &gBlas.gemmEx);
    if (!gLoaded)
        dlclose(h);
}

genie_status gpu_blas_get(const gpu_blas **ppBlas)
{
    pthread_once(&gOnce, blas_load);
    *ppBlas = gLoaded ? &gBlas : NULL;
    if (!gLoaded)
        return util_error(GENIE_EGPU, "exact GPU search needs cuBLAS: %s", gzWhy);
    return GENIE_OK;
}
