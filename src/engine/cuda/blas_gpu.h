/*
 * cuBLAS, opened with dlopen on first use (docs/CUDA.md: a search that
 * needs no GEMM never maps it).
 *
 * Only the exact vector search multiplies matrices on the GPU.  Linking
 * cuBLAS into the CUDA module made every GPU search, a match count on a
 * keyword index too, map and relocate libcublas and libcublasLt (over half
 * a gigabyte) when the module loaded: tens of milliseconds of every
 * process's start-up, for nothing.  The module links no cuBLAS now; the
 * first exact search opens GENIE_CUBLAS_SONAME (the toolkit's major
 * version, set by the build) and looks up the five functions it calls.
 */
#ifndef GENIE_ENGINE_CUDA_BLAS_GPU_H
#define GENIE_ENGINE_CUDA_BLAS_GPU_H

#include <cublas_v2.h>

#include "genie/genie.h"

typedef struct gpu_blas {
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    decltype(&cublasSetStream_v2) setStream;
    decltype(&cublasSgemm_v2) sgemm;
    /* cublasGemmEx (C++ also declares an overload of it: the C one, spelled out) */
    cublasStatus_t (*gemmEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void *,
                             const void *, cudaDataType, int, const void *, cudaDataType, int, const void *, void *,
                             cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
} gpu_blas;

/**
 * The cuBLAS functions, opening the library on the first call (once per
 * process).  @return GENIE_OK, or GENIE_EGPU with a message naming the
 * library and what dlopen or dlsym said.
 */
genie_status gpu_blas_get(const gpu_blas **ppBlas);

#endif
