// cuda_abi.h: cuda.h / cuda_runtime_api.h with the exact ABI names usable.
//
// cuda.h #defines several unversioned names to versioned ABIs (`cuMemAlloc` ->
// `cuMemAlloc_v2`, `cuCtxCreate` -> `cuCtxCreate_v4` in 13.x, `cuGetProcAddress` ->
// `cuGetProcAddress_v2`). The shim defines functions under their *exact* exported
// names, so the names that are themselves an ABI we hook are undefined here.
// Including this instead of cuda.h is the only way shim/ sees the CUDA headers.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#undef cuCtxCreate
#undef cuGetProcAddress
#undef cuIpcOpenMemHandle
#undef cuCtxSynchronize

// Legacy ABIs the driver still exports; cudaTypedefs.h only declares their types
// under __CUDA_API_VERSION_INTERNAL (which would also turn on per-thread names).
#if !defined(__CUDA_API_VERSION_INTERNAL)
typedef CUresult(CUDAAPI* PFN_cuCtxCreate_v2000)(CUcontext* pctx, unsigned int flags, CUdevice_v1 dev);
typedef CUresult(CUDAAPI* PFN_cuIpcOpenMemHandle_v4010)(CUdeviceptr_v2* pdptr, CUipcMemHandle_v1 handle,
                                                        unsigned int Flags);
#endif

// CUDA 13 headers dropped the legacy runtime entry point, CUDA 12 runtimes still
// export it; declare it ourselves so one build interposes both.
#if CUDA_VERSION >= 13000
extern "C" cudaError_t cudaThreadSynchronize(void);
#endif
