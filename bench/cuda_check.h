// cuda_check.h: the error checks of the CUDA benchmark programs of bench/: a failing call
// prints where and why, and the program exits 3 (a benchmark must not time a failure).
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

#define CHECK_CU(call)                                                             \
  do {                                                                             \
    CUresult e_ = (call);                                                          \
    if (e_ != CUDA_SUCCESS) {                                                      \
      std::fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call, \
                   static_cast<int>(e_));                                          \
      std::exit(3);                                                                \
    }                                                                              \
  } while (0)
