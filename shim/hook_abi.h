// hook_abi.h: the CUDA side of catalog/hooks.def. The rows' PFN, PARAMS, ARGS and RECARGS
// columns name CUDA types and these REC_* helpers; only shim/ expands them, through this
// header (the one way shim/ sees the CUDA headers, shim/cuda_abi.h).
#pragma once
#include "catalog/hooks.h"
#include "catalog/mem_kinds.h"
#include "shim/cuda_abi.h"

// CUDA 13.0's cuCtxSynchronize_v2 is a row whatever headers built the shim: declare its
// type where 12.x headers lack it, so a 12.9 build wraps a 13.x runtime's calls too.
#if CUDA_VERSION < 13000
typedef CUresult(CUDAAPI* PFN_cuCtxSynchronize_v13000)(CUcontext ctx);
#endif

// The wrappers and the C API are the library's only exports (shim/exports.map).
#define CUDASHIM_EXPORT __attribute__((visibility("default")))

// Helpers of the RECARGS column. An out-parameter is read after the call (a NULL one is 0).
#define REC_PTR(p) (reinterpret_cast<unsigned long long>(p))
#define REC_OUT(p) ((p) ? static_cast<unsigned long long>(*(p)) : 0ULL)
#define REC_OUTP(p) ((p) ? REC_PTR(*(p)) : 0ULL)
#define REC_2D(c) ((c) ? static_cast<unsigned long long>((c)->WidthInBytes) * (c)->Height : 0ULL)
#define REC_3D(c) ((c) ? static_cast<unsigned long long>((c)->WidthInBytes) * (c)->Height * (c)->Depth : 0ULL)
// cuMemCreate: NCCL makes host allocations this way too; the location says which.
#define REC_VMM_KIND(prop) ((prop) && (prop)->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? ::cudashim::MemKind::vmm_device : ::cudashim::MemKind::vmm_host)
#define REC_VMM_DEV(prop) ((prop) && (prop)->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? (prop)->location.id : ::cudashim::kHostDevice)
#define REC_CUR ::cudashim::kCurrentDevice
#define REC_HOST_DEVICE ::cudashim::kHostDevice
#define REC_MK(k) ::cudashim::MemKind::k
// The row's own DIR column (a copy whose direction the ABI fixes).
#define REC_DIR (::cudashim::hook_info(kId).dir)
// The direction of a runtime copy from its cudaMemcpyKind, and its host-side pointer.
#define REC_RT_DIR(kind)                                                   \
  ((kind) == cudaMemcpyHostToDevice   ? ::cudashim::CopyDir::H2D            \
   : (kind) == cudaMemcpyDeviceToHost ? ::cudashim::CopyDir::D2H            \
   : (kind) == cudaMemcpyDeviceToDevice ? ::cudashim::CopyDir::D2D : ::cudashim::CopyDir::UNKNOWN)
#define REC_RT_HOST(kind, dst, src) \
  ((kind) == cudaMemcpyHostToDevice ? (src) : (kind) == cudaMemcpyDeviceToHost ? static_cast<const void*>(dst) : nullptr)
