// hook_table.h: every ABI symbol cudashim interposes, in one table.
//
// One row per *exact* exported ABI name (cuMemAlloc_v2, cuStreamSynchronize_ptsz):
// wrappers are keyed on the versioned ABI, never on a base name or a prefix
// (PRODUCT.md, robustness rule 2). Wrappers, the name lookup, the exported-symbol
// allowlist and docs/hooks.md are all generated from these rows.
//
// Driver rows: X(NAME, FAMILY, KIND, TIMING, PFN, PARAMS, ARGS, REC)
//   FAMILY  what the call is about: memory, sync, copy, launch, stream, context,
//           module, resolve, info.
//   KIND    what the recorder is told: PASS (calls, errors), RESOLVE (PASS, but the
//           wrapper is hand-written: shim/proc_address.cpp), ALLOC (admitted by the
//           allocator policy before the call with REC's pre_bytes, then a ledger entry,
//           REC = (memkind, key, bytes, device, pre_bytes)), MEMINFO / TOTALMEM (the
//           result is capped by the policy, REC = (free, total) / (bytes, device)), MODLOAD (PASS,
//           then the image or file is noted for the module log: REC = (image, is_path)), DRVVER (PASS, and
//           the version the driver reported is kept for the live rules: REC = (int* out)), FREE (ledger entry removed
//           *before* the real call, REC = (memkind, key)), COPY (+ bytes, REC = (bytes)).
//   TIMING  NONE (no clock read), BLOCKING (wall time, counted as blocked), TIMED
//           (wall time, not a sync: module loads, async copies).
//   PFN     the cudaTypedefs.h type of this exact ABI; a static_assert checks that
//           PARAMS spell it exactly, for both the 12.9 and the 13.x headers.
// Runtime rows (shared libcudart only): R(NAME, FAMILY, KIND, TIMING, PARAMS, ARGS, REC)
//   checked against cuda_runtime_api.h by the compiler where it declares NAME.
#pragma once
#include "shim/cuda_abi.h"

// Helpers used inside REC expressions.
#define CUDASHIM_PTR(p) (reinterpret_cast<unsigned long long>(p))
#define CUDASHIM_OUT(p) ((p) ? static_cast<unsigned long long>(*(p)) : 0ULL)
#define CUDASHIM_OUTP(p) ((p) ? CUDASHIM_PTR(*(p)) : 0ULL)
#define CUDASHIM_2D(c) ((c) ? static_cast<unsigned long long>((c)->WidthInBytes) * (c)->Height : 0ULL)
#define CUDASHIM_3D(c) ((c) ? static_cast<unsigned long long>((c)->WidthInBytes) * (c)->Height * (c)->Depth : 0ULL)
#define CUDASHIM_VMM_KIND(prop) ((prop) && (prop)->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? ::cudashim::MemKind::vmm_device : ::cudashim::MemKind::vmm_host)
#define CUDASHIM_VMM_DEV(prop) ((prop) && (prop)->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? (prop)->location.id : ::cudashim::kHostDevice)
#define CUDASHIM_CUR ::cudashim::kCurrentDevice
// The direction of a runtime copy from its cudaMemcpyKind, and its host-side pointer.
#define CUDASHIM_RT_DIR(kind)                                                   \
  ((kind) == cudaMemcpyHostToDevice   ? ::cudashim::CopyDir::H2D                 \
   : (kind) == cudaMemcpyDeviceToHost ? ::cudashim::CopyDir::D2H                 \
   : (kind) == cudaMemcpyDeviceToDevice ? ::cudashim::CopyDir::D2D : ::cudashim::CopyDir::UNKNOWN)
#define CUDASHIM_RT_HOST(kind, dst, src) \
  ((kind) == cudaMemcpyHostToDevice ? (src) : (kind) == cudaMemcpyDeviceToHost ? static_cast<const void*>(dst) : nullptr)
#define MK(k) ::cudashim::MemKind::k

#if CUDA_VERSION >= 13000
#define CUDASHIM_DRIVER_HOOKS_13(X) \
  X(cuCtxSynchronize_v2, sync, PASS, BLOCKING, PFN_cuCtxSynchronize_v13000, (CUcontext ctx), (ctx), ())
#else
#define CUDASHIM_DRIVER_HOOKS_13(X)
#endif

// Two variants (legacy stream / per-thread default stream) of one shape.
#define CUDASHIM_PT2(X, N, SFX, FAM, KIND, TIMING, PFNBASE, PARAMS, ARGS, REC) \
  X(N, FAM, KIND, TIMING, PFNBASE, PARAMS, ARGS, REC) \
  X(N##SFX, FAM, KIND, TIMING, PFNBASE, PARAMS, ARGS, REC)

#define CUDASHIM_DRIVER_HOOKS(X) \
  /* resolution: cuGetProcAddress has hand-written wrappers (shim/proc_address.cpp) */ \
  X(cuGetProcAddress, resolve, RESOLVE, NONE, PFN_cuGetProcAddress_v11030, (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags), (symbol, pfn, cudaVersion, flags), ()) \
  X(cuGetProcAddress_v2, resolve, RESOLVE, NONE, PFN_cuGetProcAddress_v12000, (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags, CUdriverProcAddressQueryResult* symbolStatus), (symbol, pfn, cudaVersion, flags, symbolStatus), ()) \
  X(cuInit, context, PASS, TIMED, PFN_cuInit_v2000, (unsigned int Flags), (Flags), ()) \
  X(cuDriverGetVersion, info, DRVVER, NONE, PFN_cuDriverGetVersion_v2020, (int* driverVersion), (driverVersion), (driverVersion)) \
  /* memory */ \
  X(cuMemAlloc_v2, memory, ALLOC, NONE, PFN_cuMemAlloc_v3020, (CUdeviceptr* dptr, size_t bytesize), (dptr, bytesize), (MK(device), CUDASHIM_OUT(dptr), bytesize, CUDASHIM_CUR, bytesize)) \
  X(cuMemAllocPitch_v2, memory, ALLOC, NONE, PFN_cuMemAllocPitch_v3020, (CUdeviceptr* dptr, size_t* pPitch, size_t WidthInBytes, size_t Height, unsigned int ElementSizeBytes), (dptr, pPitch, WidthInBytes, Height, ElementSizeBytes), (MK(device), CUDASHIM_OUT(dptr), (pPitch ? *pPitch : WidthInBytes) * Height, CUDASHIM_CUR, WidthInBytes * Height)) \
  X(cuMemAllocManaged, memory, ALLOC, NONE, PFN_cuMemAllocManaged_v6000, (CUdeviceptr* dptr, size_t bytesize, unsigned int flags), (dptr, bytesize, flags), (MK(managed), CUDASHIM_OUT(dptr), bytesize, CUDASHIM_CUR, bytesize)) \
  X(cuMemFree_v2, memory, FREE, BLOCKING, PFN_cuMemFree_v3020, (CUdeviceptr dptr), (dptr), (MK(device), dptr)) \
  X(cuMemAllocHost_v2, memory, ALLOC, TIMED, PFN_cuMemAllocHost_v3020, (void** pp, size_t bytesize), (pp, bytesize), (MK(host_pinned), CUDASHIM_OUTP(pp), bytesize, ::cudashim::kHostDevice, bytesize)) \
  X(cuMemHostAlloc, memory, ALLOC, TIMED, PFN_cuMemHostAlloc_v2020, (void** pp, size_t bytesize, unsigned int Flags), (pp, bytesize, Flags), (MK(host_pinned), CUDASHIM_OUTP(pp), bytesize, ::cudashim::kHostDevice, bytesize)) \
  X(cuMemFreeHost, memory, FREE, BLOCKING, PFN_cuMemFreeHost_v2000, (void* p), (p), (MK(host_pinned), CUDASHIM_PTR(p))) \
  X(cuMemHostRegister_v2, memory, ALLOC, TIMED, PFN_cuMemHostRegister_v6050, (void* p, size_t bytesize, unsigned int Flags), (p, bytesize, Flags), (MK(host_registered), CUDASHIM_PTR(p), bytesize, ::cudashim::kHostDevice, bytesize)) \
  X(cuMemHostUnregister, memory, FREE, TIMED, PFN_cuMemHostUnregister_v4000, (void* p), (p), (MK(host_registered), CUDASHIM_PTR(p))) \
  CUDASHIM_PT2(X, cuMemAllocAsync, _ptsz, memory, ALLOC, NONE, PFN_cuMemAllocAsync_v11020, (CUdeviceptr* dptr, size_t bytesize, CUstream hStream), (dptr, bytesize, hStream), (MK(async), CUDASHIM_OUT(dptr), bytesize, CUDASHIM_CUR, bytesize)) \
  CUDASHIM_PT2(X, cuMemAllocFromPoolAsync, _ptsz, memory, ALLOC, NONE, PFN_cuMemAllocFromPoolAsync_v11020, (CUdeviceptr* dptr, size_t bytesize, CUmemoryPool pool, CUstream hStream), (dptr, bytesize, pool, hStream), (MK(async), CUDASHIM_OUT(dptr), bytesize, CUDASHIM_CUR, bytesize)) \
  CUDASHIM_PT2(X, cuMemFreeAsync, _ptsz, memory, FREE, NONE, PFN_cuMemFreeAsync_v11020, (CUdeviceptr dptr, CUstream hStream), (dptr, hStream), (MK(async), dptr)) \
  X(cuMemPoolTrimTo, memory, PASS, TIMED, PFN_cuMemPoolTrimTo_v11020, (CUmemoryPool pool, size_t minBytesToKeep), (pool, minBytesToKeep), ()) \
  X(cuMemCreate, memory, ALLOC, NONE, PFN_cuMemCreate_v10020, (CUmemGenericAllocationHandle* handle, size_t size, const CUmemAllocationProp* prop, unsigned long long flags), (handle, size, prop, flags), (CUDASHIM_VMM_KIND(prop), CUDASHIM_OUT(handle), size, CUDASHIM_VMM_DEV(prop), size)) \
  X(cuMemRelease, memory, FREE, NONE, PFN_cuMemRelease_v10020, (CUmemGenericAllocationHandle handle), (handle), (MK(vmm_device), handle)) \
  X(cuMemMap, memory, PASS, NONE, PFN_cuMemMap_v10020, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags), (ptr, size, offset, handle, flags), ()) \
  X(cuMemUnmap, memory, PASS, TIMED, PFN_cuMemUnmap_v10020, (CUdeviceptr ptr, size_t size), (ptr, size), ()) \
  X(cuMemAddressReserve, memory, PASS, NONE, PFN_cuMemAddressReserve_v10020, (CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags), (ptr, size, alignment, addr, flags), ()) \
  X(cuMemAddressFree, memory, PASS, NONE, PFN_cuMemAddressFree_v10020, (CUdeviceptr ptr, size_t size), (ptr, size), ()) \
  X(cuIpcOpenMemHandle, memory, ALLOC, NONE, PFN_cuIpcOpenMemHandle_v4010, (CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags), (pdptr, handle, Flags), (MK(ipc), CUDASHIM_OUT(pdptr), 0, CUDASHIM_CUR, 0)) \
  X(cuIpcOpenMemHandle_v2, memory, ALLOC, NONE, PFN_cuIpcOpenMemHandle_v11000, (CUdeviceptr* pdptr, CUipcMemHandle handle, unsigned int Flags), (pdptr, handle, Flags), (MK(ipc), CUDASHIM_OUT(pdptr), 0, CUDASHIM_CUR, 0)) \
  X(cuIpcCloseMemHandle, memory, FREE, NONE, PFN_cuIpcCloseMemHandle_v4010, (CUdeviceptr dptr), (dptr), (MK(ipc), dptr)) \
  X(cuMemGetInfo_v2, info, MEMINFO, NONE, PFN_cuMemGetInfo_v3020, (size_t* free, size_t* total), (free, total), (free, total)) \
  X(cuDeviceTotalMem_v2, info, TOTALMEM, NONE, PFN_cuDeviceTotalMem_v3020, (size_t* bytes, CUdevice dev), (bytes, dev), (bytes, dev)) \
  /* synchronization */ \
  X(cuCtxSynchronize, sync, PASS, BLOCKING, PFN_cuCtxSynchronize_v2000, (void), (), ()) \
  CUDASHIM_DRIVER_HOOKS_13(X) \
  CUDASHIM_PT2(X, cuStreamSynchronize, _ptsz, sync, PASS, BLOCKING, PFN_cuStreamSynchronize_v2000, (CUstream hStream), (hStream), ()) \
  X(cuEventSynchronize, sync, PASS, BLOCKING, PFN_cuEventSynchronize_v2000, (CUevent hEvent), (hEvent), ()) \
  CUDASHIM_PT2(X, cuStreamQuery, _ptsz, sync, PASS, NONE, PFN_cuStreamQuery_v2000, (CUstream hStream), (hStream), ()) \
  X(cuEventQuery, sync, PASS, NONE, PFN_cuEventQuery_v2000, (CUevent hEvent), (hEvent), ()) \
  CUDASHIM_PT2(X, cuStreamWaitEvent, _ptsz, sync, PASS, NONE, PFN_cuStreamWaitEvent_v3020, (CUstream hStream, CUevent hEvent, unsigned int Flags), (hStream, hEvent, Flags), ()) \
  /* copies: synchronous ones block (BLOCKING), async ones are timed to catch those that run synchronously */ \
  CUDASHIM_PT2(X, cuMemcpy, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpy_v4000, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount), (dst, src, ByteCount), (ByteCount, ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyAsync, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyAsync_v4000, (CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream), (dst, src, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyPeer, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyPeer_v4000, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount), (dstDevice, dstContext, srcDevice, srcContext, ByteCount), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyPeerAsync, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyPeerAsync_v4000, (CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext, size_t ByteCount, CUstream hStream), (dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyHtoD_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyHtoD_v3020, (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount), (dstDevice, srcHost, ByteCount), (ByteCount, ::cudashim::CopyDir::H2D, srcHost)) \
  CUDASHIM_PT2(X, cuMemcpyDtoH_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyDtoH_v3020, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount), (dstHost, srcDevice, ByteCount), (ByteCount, ::cudashim::CopyDir::D2H, dstHost)) \
  CUDASHIM_PT2(X, cuMemcpyDtoD_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyDtoD_v3020, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount), (dstDevice, srcDevice, ByteCount), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyHtoDAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyHtoDAsync_v3020, (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount, CUstream hStream), (dstDevice, srcHost, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::H2D, srcHost)) \
  CUDASHIM_PT2(X, cuMemcpyDtoHAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyDtoHAsync_v3020, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstHost, srcDevice, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::D2H, dstHost)) \
  CUDASHIM_PT2(X, cuMemcpyDtoDAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyDtoDAsync_v3020, (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream), (dstDevice, srcDevice, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy2D_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpy2D_v3020, (const CUDA_MEMCPY2D* pCopy), (pCopy), (CUDASHIM_2D(pCopy), ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy2DUnaligned_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpy2DUnaligned_v3020, (const CUDA_MEMCPY2D* pCopy), (pCopy), (CUDASHIM_2D(pCopy), ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy2DAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpy2DAsync_v3020, (const CUDA_MEMCPY2D* pCopy, CUstream hStream), (pCopy, hStream), (CUDASHIM_2D(pCopy), ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy3D_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpy3D_v3020, (const CUDA_MEMCPY3D* pCopy), (pCopy), (CUDASHIM_3D(pCopy), ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy3DAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpy3DAsync_v3020, (const CUDA_MEMCPY3D* pCopy, CUstream hStream), (pCopy, hStream), (CUDASHIM_3D(pCopy), ::cudashim::CopyDir::UNKNOWN, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy3DPeer, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpy3DPeer_v4000, (const CUDA_MEMCPY3D_PEER* pCopy), (pCopy), (CUDASHIM_3D(pCopy), ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpy3DPeerAsync, _ptsz, copy, COPY, TIMED, PFN_cuMemcpy3DPeerAsync_v4000, (const CUDA_MEMCPY3D_PEER* pCopy, CUstream hStream), (pCopy, hStream), (CUDASHIM_3D(pCopy), ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyHtoA_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyHtoA_v3020, (CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount), (dstArray, dstOffset, srcHost, ByteCount), (ByteCount, ::cudashim::CopyDir::H2D, srcHost)) \
  CUDASHIM_PT2(X, cuMemcpyAtoH_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyAtoH_v3020, (void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstHost, srcArray, srcOffset, ByteCount), (ByteCount, ::cudashim::CopyDir::D2H, dstHost)) \
  CUDASHIM_PT2(X, cuMemcpyDtoA_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyDtoA_v3020, (CUarray dstArray, size_t dstOffset, CUdeviceptr srcDevice, size_t ByteCount), (dstArray, dstOffset, srcDevice, ByteCount), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyAtoD_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyAtoD_v3020, (CUdeviceptr dstDevice, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstDevice, srcArray, srcOffset, ByteCount), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyAtoA_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemcpyAtoA_v3020, (CUarray dstArray, size_t dstOffset, CUarray srcArray, size_t srcOffset, size_t ByteCount), (dstArray, dstOffset, srcArray, srcOffset, ByteCount), (ByteCount, ::cudashim::CopyDir::D2D, nullptr)) \
  CUDASHIM_PT2(X, cuMemcpyHtoAAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyHtoAAsync_v3020, (CUarray dstArray, size_t dstOffset, const void* srcHost, size_t ByteCount, CUstream hStream), (dstArray, dstOffset, srcHost, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::H2D, srcHost)) \
  CUDASHIM_PT2(X, cuMemcpyAtoHAsync_v2, _ptsz, copy, COPY, TIMED, PFN_cuMemcpyAtoHAsync_v3020, (void* dstHost, CUarray srcArray, size_t srcOffset, size_t ByteCount, CUstream hStream), (dstHost, srcArray, srcOffset, ByteCount, hStream), (ByteCount, ::cudashim::CopyDir::D2H, dstHost)) \
  CUDASHIM_PT2(X, cuMemsetD8_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD8_v3020, (CUdeviceptr dstDevice, unsigned char uc, size_t N), (dstDevice, uc, N), (N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD16_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD16_v3020, (CUdeviceptr dstDevice, unsigned short us, size_t N), (dstDevice, us, N), (2ULL * N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD32_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD32_v3020, (CUdeviceptr dstDevice, unsigned int ui, size_t N), (dstDevice, ui, N), (4ULL * N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D8_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD2D8_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height), (dstDevice, dstPitch, uc, Width, Height), (1ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D16_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD2D16_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height), (dstDevice, dstPitch, us, Width, Height), (2ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D32_v2, _ptds, copy, COPY, BLOCKING, PFN_cuMemsetD2D32_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height), (dstDevice, dstPitch, ui, Width, Height), (4ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD8Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD8Async_v3020, (CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream), (dstDevice, uc, N, hStream), (N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD16Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD16Async_v3020, (CUdeviceptr dstDevice, unsigned short us, size_t N, CUstream hStream), (dstDevice, us, N, hStream), (2ULL * N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD32Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD32Async_v3020, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream), (dstDevice, ui, N, hStream), (4ULL * N, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D8Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD2D8Async_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned char uc, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, uc, Width, Height, hStream), (1ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D16Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD2D16Async_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned short us, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, us, Width, Height, hStream), (2ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_PT2(X, cuMemsetD2D32Async, _ptsz, copy, COPY, TIMED, PFN_cuMemsetD2D32Async_v3020, (CUdeviceptr dstDevice, size_t dstPitch, unsigned int ui, size_t Width, size_t Height, CUstream hStream), (dstDevice, dstPitch, ui, Width, Height, hStream), (4ULL * Width * Height, ::cudashim::CopyDir::MEMSET, nullptr)) \
  /* launches: counted, never timed (the hot path of a training step) */ \
  CUDASHIM_PT2(X, cuLaunchKernel, _ptsz, launch, LAUNCH, NONE, PFN_cuLaunchKernel_v4000, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra), (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams, extra), (hStream)) \
  CUDASHIM_PT2(X, cuLaunchKernelEx, _ptsz, launch, LAUNCH, NONE, PFN_cuLaunchKernelEx_v11060, (const CUlaunchConfig* config, CUfunction f, void** kernelParams, void** extra), (config, f, kernelParams, extra), (config ? config->hStream : nullptr)) \
  CUDASHIM_PT2(X, cuLaunchCooperativeKernel, _ptsz, launch, LAUNCH, NONE, PFN_cuLaunchCooperativeKernel_v9000, (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void** kernelParams), (f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream, kernelParams), (hStream)) \
  CUDASHIM_PT2(X, cuGraphLaunch, _ptsz, launch, LAUNCH, NONE, PFN_cuGraphLaunch_v10000, (CUgraphExec hGraphExec, CUstream hStream), (hGraphExec, hStream), (hStream)) \
  /* streams and contexts */ \
  X(cuStreamCreate, stream, STREAM, NONE, PFN_cuStreamCreate_v2000, (CUstream* phStream, unsigned int Flags), (phStream, Flags), (Flags, phStream)) \
  X(cuStreamCreateWithPriority, stream, STREAM, NONE, PFN_cuStreamCreateWithPriority_v5050, (CUstream* phStream, unsigned int flags, int priority), (phStream, flags, priority), (flags, phStream)) \
  X(cuStreamDestroy_v2, stream, PASS, NONE, PFN_cuStreamDestroy_v4000, (CUstream hStream), (hStream), ()) \
  X(cuDevicePrimaryCtxSetFlags_v2, context, CTXFLAGS, NONE, PFN_cuDevicePrimaryCtxSetFlags_v11000, (CUdevice dev, unsigned int flags), (dev, flags), (flags)) \
  X(cuCtxCreate, context, CTXFLAGS, TIMED, PFN_cuCtxCreate_v2000, (CUcontext* pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev), (flags)) \
  X(cuCtxCreate_v2, context, CTXFLAGS, TIMED, PFN_cuCtxCreate_v3020, (CUcontext* pctx, unsigned int flags, CUdevice dev), (pctx, flags, dev), (flags)) \
  X(cuCtxCreate_v3, context, CTXFLAGS, TIMED, PFN_cuCtxCreate_v11040, (CUcontext* pctx, CUexecAffinityParam* paramsArray, int numParams, unsigned int flags, CUdevice dev), (pctx, paramsArray, numParams, flags, dev), (flags)) \
  X(cuCtxCreate_v4, context, CTXFLAGS, TIMED, PFN_cuCtxCreate_v12050, (CUcontext* pctx, CUctxCreateParams* ctxCreateParams, unsigned int flags, CUdevice dev), (pctx, ctxCreateParams, flags, dev), (flags)) \
  /* modules: the time spent here shows JIT compilation at start-up */ \
  X(cuModuleLoad, module, MODLOAD, TIMED, PFN_cuModuleLoad_v2000, (CUmodule* module, const char* fname), (module, fname), (fname, true)) \
  X(cuModuleLoadData, module, MODLOAD, TIMED, PFN_cuModuleLoadData_v2000, (CUmodule* module, const void* image), (module, image), (image, false)) \
  X(cuModuleLoadDataEx, module, MODLOAD, TIMED, PFN_cuModuleLoadDataEx_v2010, (CUmodule* module, const void* image, unsigned int numOptions, CUjit_option* options, void** optionValues), (module, image, numOptions, options, optionValues), (image, false)) \
  X(cuModuleLoadFatBinary, module, MODLOAD, TIMED, PFN_cuModuleLoadFatBinary_v2000, (CUmodule* module, const void* fatCubin), (module, fatCubin), (fatCubin, false)) \
  X(cuLibraryLoadData, module, MODLOAD, TIMED, PFN_cuLibraryLoadData_v12000, (CUlibrary* library, const void* code, CUjit_option* jitOptions, void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues, unsigned int numLibraryOptions), (library, code, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions), (code, false)) \
  X(cuLibraryLoadFromFile, module, MODLOAD, TIMED, PFN_cuLibraryLoadFromFile_v12000, (CUlibrary* library, const char* fileName, CUjit_option* jitOptions, void** jitOptionsValues, unsigned int numJitOptions, CUlibraryOption* libraryOptions, void** libraryOptionValues, unsigned int numLibraryOptions), (library, fileName, jitOptions, jitOptionsValues, numJitOptions, libraryOptions, libraryOptionValues, numLibraryOptions), (fileName, true))

// Runtime rows: interposed where libcudart is a shared library (torch, most Python
// wheels). Memory is accounted at the driver level only (one ledger; the runtime
// rows nest over driver rows), so runtime memory rows are PASS.
#define CUDASHIM_RT_PT(R, N, SFX, FAM, KIND, TIMING, PARAMS, ARGS, REC) \
  R(N, FAM, KIND, TIMING, PARAMS, ARGS, REC) \
  R(N##SFX, FAM, KIND, TIMING, PARAMS, ARGS, REC)

#define CUDASHIM_RUNTIME_HOOKS(R) \
  R(cudaMalloc, memory, PASS, NONE, (void** devPtr, size_t size), (devPtr, size), ()) \
  R(cudaFree, memory, PASS, BLOCKING, (void* devPtr), (devPtr), ()) \
  R(cudaMallocHost, memory, PASS, TIMED, (void** ptr, size_t size), (ptr, size), ()) \
  R(cudaFreeHost, memory, PASS, BLOCKING, (void* ptr), (ptr), ()) \
  R(cudaHostAlloc, memory, PASS, TIMED, (void** pHost, size_t size, unsigned int flags), (pHost, size, flags), ()) \
  R(cudaMallocManaged, memory, PASS, NONE, (void** devPtr, size_t size, unsigned int flags), (devPtr, size, flags), ()) \
  R(cudaMallocPitch, memory, PASS, NONE, (void** devPtr, size_t* pitch, size_t width, size_t height), (devPtr, pitch, width, height), ()) \
  CUDASHIM_RT_PT(R, cudaMallocAsync, _ptsz, memory, PASS, NONE, (void** devPtr, size_t size, cudaStream_t hStream), (devPtr, size, hStream), ()) \
  CUDASHIM_RT_PT(R, cudaFreeAsync, _ptsz, memory, PASS, NONE, (void* devPtr, cudaStream_t hStream), (devPtr, hStream), ()) \
  R(cudaDeviceSynchronize, sync, PASS, BLOCKING, (void), (), ()) \
  R(cudaThreadSynchronize, sync, PASS, BLOCKING, (void), (), ()) \
  CUDASHIM_RT_PT(R, cudaStreamSynchronize, _ptsz, sync, PASS, BLOCKING, (cudaStream_t stream), (stream), ()) \
  R(cudaEventSynchronize, sync, PASS, BLOCKING, (cudaEvent_t event), (event), ()) \
  CUDASHIM_RT_PT(R, cudaStreamQuery, _ptsz, sync, PASS, NONE, (cudaStream_t stream), (stream), ()) \
  R(cudaEventQuery, sync, PASS, NONE, (cudaEvent_t event), (event), ()) \
  CUDASHIM_RT_PT(R, cudaMemcpy, _ptds, copy, COPY, BLOCKING, (void* dst, const void* src, size_t count, enum cudaMemcpyKind kind), (dst, src, count, kind), (count, CUDASHIM_RT_DIR(kind), CUDASHIM_RT_HOST(kind, dst, src))) \
  CUDASHIM_RT_PT(R, cudaMemcpyAsync, _ptsz, copy, COPY, TIMED, (void* dst, const void* src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream), (dst, src, count, kind, stream), (count, CUDASHIM_RT_DIR(kind), CUDASHIM_RT_HOST(kind, dst, src))) \
  CUDASHIM_RT_PT(R, cudaMemset, _ptds, copy, COPY, BLOCKING, (void* devPtr, int value, size_t count), (devPtr, value, count), (count, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_RT_PT(R, cudaMemsetAsync, _ptsz, copy, COPY, TIMED, (void* devPtr, int value, size_t count, cudaStream_t stream), (devPtr, value, count, stream), (count, ::cudashim::CopyDir::MEMSET, nullptr)) \
  CUDASHIM_RT_PT(R, cudaLaunchKernel, _ptsz, launch, PASS, NONE, (const void* func, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream), (func, gridDim, blockDim, args, sharedMem, stream), ()) \
  /* nvcc's <<<>>> calls these since CUDA 12.8 (crt/device_functions.h); torch 2.11 imports them */ \
  CUDASHIM_RT_PT(R, __cudaLaunchKernel, _ptsz, launch, PASS, NONE, (cudaKernel_t kernel, dim3 gridDim, dim3 blockDim, void** args, size_t sharedMem, cudaStream_t stream), (kernel, gridDim, blockDim, args, sharedMem, stream), ()) \
  CUDASHIM_RT_PT(R, cudaLaunchKernelExC, _ptsz, launch, PASS, NONE, (const cudaLaunchConfig_t* config, const void* func, void** args), (config, func, args), ())
