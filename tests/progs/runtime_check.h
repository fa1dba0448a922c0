// runtime_check.h: CHECK_RT(call) for the test programs that call the runtime API:
// on a non-zero cudaError_t, print where and what, and return 1 from main.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdio>

#define CHECK_RT(call)                                                                \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, e_); \
      return 1;                                                                       \
    }                                                                                 \
  } while (0)
