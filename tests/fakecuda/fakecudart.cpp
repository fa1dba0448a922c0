// A tiny fake CUDA runtime (libcudart.so.12 / .13) for tests.
//
// It reaches the driver exactly the way the real libcudart does: on first use it dlopens
// "libcuda.so.1", looks up cuGetProcAddress_v2 with dlsym and fetches every other driver function
// through it (cudaVersion = CUDA_VERSION; CU_GET_PROC_ADDRESS_DEFAULT for the plain entry points,
// CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM for the _ptds/_ptsz ones). Then it calls cuInit(0),
// retains the primary context of device 0 and makes it current on each thread that has none.
// Errors: CUresult 0 -> cudaSuccess, 2 -> cudaErrorMemoryAllocation, 600 -> cudaErrorNotReady,
// anything else -> cudaErrorUnknown; a missing driver -> cudaErrorInsufficientDriver.

// Internal mode makes cuda_runtime_api.h declare both cudaMemcpy and cudaMemcpy_ptds (etc.), so each
// definition below is checked against the header's declaration of the same name.
#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_VERSION_INTERNAL_ODR 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include <dlfcn.h>

#define FCRT_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// The driver functions the runtime uses, as returned by cuGetProcAddress_v2 for one stream mode.
struct Driver {
  PFN_cuInit_v2000 init;
  PFN_cuDriverGetVersion_v2020 driverGetVersion;
  PFN_cuDevicePrimaryCtxRetain_v7000 primaryCtxRetain;
  PFN_cuCtxGetCurrent_v4000 ctxGetCurrent;
  PFN_cuCtxSetCurrent_v4000 ctxSetCurrent;
#if CUDA_VERSION >= 13000
  PFN_cuCtxSynchronize_v13000 ctxSynchronize;  // "cuCtxSynchronize" at 13000 is cuCtxSynchronize_v2(ctx)
#else
  PFN_cuCtxSynchronize_v2000 ctxSynchronize;
#endif
  PFN_cuMemAlloc_v3020 memAlloc;
  PFN_cuMemFree_v3020 memFree;
  PFN_cuMemAllocHost_v3020 memAllocHost;
  PFN_cuMemFreeHost_v2000 memFreeHost;
  PFN_cuMemHostAlloc_v2020 memHostAlloc;
  PFN_cuMemAllocManaged_v6000 memAllocManaged;
  PFN_cuMemAllocPitch_v3020 memAllocPitch;
  PFN_cuMemAllocAsync_v11020 memAllocAsync;
  PFN_cuMemFreeAsync_v11020 memFreeAsync;
  PFN_cuStreamCreate_v2000 streamCreate;
  PFN_cuStreamDestroy_v4000 streamDestroy;
  PFN_cuStreamSynchronize_v2000 streamSynchronize;
  PFN_cuStreamQuery_v2000 streamQuery;
  PFN_cuEventCreate_v2000 eventCreate;
  PFN_cuEventRecord_v2000 eventRecord;
  PFN_cuEventSynchronize_v2000 eventSynchronize;
  PFN_cuEventQuery_v2000 eventQuery;
  PFN_cuEventDestroy_v4000 eventDestroy;
  PFN_cuMemcpy_v4000 memcpy;
  PFN_cuMemcpyHtoD_v3020 memcpyHtoD;
  PFN_cuMemcpyDtoH_v3020 memcpyDtoH;
  PFN_cuMemcpyDtoD_v3020 memcpyDtoD;
  PFN_cuMemcpyAsync_v4000 memcpyAsync;
  PFN_cuMemcpyHtoDAsync_v3020 memcpyHtoDAsync;
  PFN_cuMemcpyDtoHAsync_v3020 memcpyDtoHAsync;
  PFN_cuMemcpyDtoDAsync_v3020 memcpyDtoDAsync;
  PFN_cuMemsetD8_v3020 memsetD8;
  PFN_cuMemsetD8Async_v3020 memsetD8Async;
  PFN_cuLaunchKernel_v4000 launchKernel;
};

// The loaded driver: cuGetProcAddress_v2 plus one function table per stream mode.
struct Runtime {
  bool ok = false;
  PFN_cuGetProcAddress_v12000 getProcAddress = nullptr;
  Driver legacy{};      // fetched with CU_GET_PROC_ADDRESS_DEFAULT
  Driver per_thread{};  // fetched with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
  CUcontext primary = nullptr;
};

// Fetches every Driver member through cuGetProcAddress_v2; false when one is missing.
bool fetch_all(PFN_cuGetProcAddress_v12000 gpa, cuuint64_t flags, Driver& d) {
  bool ok = true;
  auto get = [&](auto& slot, const char* name) {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult status{};
    if (gpa(name, &fn, CUDA_VERSION, flags, &status) != CUDA_SUCCESS || fn == nullptr) ok = false;
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(fn);
  };
  get(d.init, "cuInit");
  get(d.driverGetVersion, "cuDriverGetVersion");
  get(d.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(d.ctxGetCurrent, "cuCtxGetCurrent");
  get(d.ctxSetCurrent, "cuCtxSetCurrent");
  get(d.ctxSynchronize, "cuCtxSynchronize");
  get(d.memAlloc, "cuMemAlloc");
  get(d.memFree, "cuMemFree");
  get(d.memAllocHost, "cuMemAllocHost");
  get(d.memFreeHost, "cuMemFreeHost");
  get(d.memHostAlloc, "cuMemHostAlloc");
  get(d.memAllocManaged, "cuMemAllocManaged");
  get(d.memAllocPitch, "cuMemAllocPitch");
  get(d.memAllocAsync, "cuMemAllocAsync");
  get(d.memFreeAsync, "cuMemFreeAsync");
  get(d.streamCreate, "cuStreamCreate");
  get(d.streamDestroy, "cuStreamDestroy");
  get(d.streamSynchronize, "cuStreamSynchronize");
  get(d.streamQuery, "cuStreamQuery");
  get(d.eventCreate, "cuEventCreate");
  get(d.eventRecord, "cuEventRecord");
  get(d.eventSynchronize, "cuEventSynchronize");
  get(d.eventQuery, "cuEventQuery");
  get(d.eventDestroy, "cuEventDestroy");
  get(d.memcpy, "cuMemcpy");
  get(d.memcpyHtoD, "cuMemcpyHtoD");
  get(d.memcpyDtoH, "cuMemcpyDtoH");
  get(d.memcpyDtoD, "cuMemcpyDtoD");
  get(d.memcpyAsync, "cuMemcpyAsync");
  get(d.memcpyHtoDAsync, "cuMemcpyHtoDAsync");
  get(d.memcpyDtoHAsync, "cuMemcpyDtoHAsync");
  get(d.memcpyDtoDAsync, "cuMemcpyDtoDAsync");
  get(d.memsetD8, "cuMemsetD8");
  get(d.memsetD8Async, "cuMemsetD8Async");
  get(d.launchKernel, "cuLaunchKernel");
  return ok;
}

Runtime load() {
  Runtime r;
  void* h = dlopen("libcuda.so.1", RTLD_NOW);  // kept open for the life of the process
  if (h == nullptr) return r;
  r.getProcAddress = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(h, "cuGetProcAddress_v2"));
  if (r.getProcAddress == nullptr) return r;
  if (!fetch_all(r.getProcAddress, CU_GET_PROC_ADDRESS_DEFAULT, r.legacy)) return r;
  if (!fetch_all(r.getProcAddress, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, r.per_thread)) return r;
  if (r.legacy.init(0) != CUDA_SUCCESS) return r;
  if (r.legacy.primaryCtxRetain(&r.primary, 0) != CUDA_SUCCESS) return r;
  r.ok = true;
  return r;
}

// The runtime after the one-time load; nullptr when no usable driver was found.
const Runtime* runtime() {
  static const Runtime r = load();
  return r.ok ? &r : nullptr;
}

thread_local cudaError_t t_last_error = cudaSuccess;
thread_local bool t_ctx_bound = false;

// Remembers a failure for cudaGetLastError and passes `e` through.
cudaError_t note(cudaError_t e) {
  if (e != cudaSuccess) t_last_error = e;
  return e;
}

cudaError_t to_rt(CUresult r) {
  switch (static_cast<int>(r)) {
    case 0: return cudaSuccess;
    case 2: return cudaErrorMemoryAllocation;
    case 600: return cudaErrorNotReady;
    default: return cudaErrorUnknown;
  }
}

// Runs f(driver table) after loading the driver and, when `bind` is set, making the primary context
// current on this thread if it has none; returns f's result, remembered for cudaGetLastError.
template <class F>
cudaError_t with_driver(bool per_thread, bool bind, F&& f) {
  const Runtime* r = runtime();
  if (r == nullptr) return note(cudaErrorInsufficientDriver);
  if (bind && !t_ctx_bound) {
    CUcontext cur = nullptr;
    if (r->legacy.ctxGetCurrent(&cur) == CUDA_SUCCESS && cur == nullptr) r->legacy.ctxSetCurrent(r->primary);
    t_ctx_bound = true;
  }
  return note(f(per_thread ? r->per_thread : r->legacy));
}

CUdeviceptr dptr(const void* p) { return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)); }

cudaError_t memcpy_sync(bool pt, void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  return with_driver(pt, true, [&](const Driver& d) {
    switch (kind) {
      case cudaMemcpyHostToDevice: return to_rt(d.memcpyHtoD(dptr(dst), src, n));
      case cudaMemcpyDeviceToHost: return to_rt(d.memcpyDtoH(dst, dptr(src), n));
      case cudaMemcpyDeviceToDevice: return to_rt(d.memcpyDtoD(dptr(dst), dptr(src), n));
      case cudaMemcpyHostToHost:
      case cudaMemcpyDefault: return to_rt(d.memcpy(dptr(dst), dptr(src), n));
    }
    return cudaErrorInvalidMemcpyDirection;
  });
}

cudaError_t memcpy_async(bool pt, void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) {
    switch (kind) {
      case cudaMemcpyHostToDevice: return to_rt(d.memcpyHtoDAsync(dptr(dst), src, n, s));
      case cudaMemcpyDeviceToHost: return to_rt(d.memcpyDtoHAsync(dst, dptr(src), n, s));
      case cudaMemcpyDeviceToDevice: return to_rt(d.memcpyDtoDAsync(dptr(dst), dptr(src), n, s));
      case cudaMemcpyHostToHost:
      case cudaMemcpyDefault: return to_rt(d.memcpyAsync(dptr(dst), dptr(src), n, s));
    }
    return cudaErrorInvalidMemcpyDirection;
  });
}

cudaError_t memset_sync(bool pt, void* p, int value, size_t n) {
  return with_driver(pt, true,
                     [&](const Driver& d) { return to_rt(d.memsetD8(dptr(p), static_cast<unsigned char>(value), n)); });
}

cudaError_t memset_async(bool pt, void* p, int value, size_t n, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) {
    return to_rt(d.memsetD8Async(dptr(p), static_cast<unsigned char>(value), n, s));
  });
}

cudaError_t launch(bool pt, const void* func, dim3 grid, dim3 block, void** args, size_t shmem, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) {
    // The fake driver accepts the host stub address as the CUfunction.
    CUfunction f = reinterpret_cast<CUfunction>(const_cast<void*>(func));
    return to_rt(d.launchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, static_cast<unsigned>(shmem), s,
                                args, nullptr));
  });
}

cudaError_t stream_sync(bool pt, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) { return to_rt(d.streamSynchronize(s)); });
}

cudaError_t stream_query(bool pt, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) { return to_rt(d.streamQuery(s)); });
}

cudaError_t event_record(bool pt, cudaEvent_t e, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) { return to_rt(d.eventRecord(e, s)); });
}

cudaError_t malloc_async(bool pt, void** p, size_t n, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) {
    CUdeviceptr q = 0;
    CUresult r = d.memAllocAsync(&q, n, s);
    if (r == CUDA_SUCCESS) *p = reinterpret_cast<void*>(static_cast<uintptr_t>(q));
    return to_rt(r);
  });
}

cudaError_t free_async(bool pt, void* p, cudaStream_t s) {
  return with_driver(pt, true, [&](const Driver& d) { return to_rt(d.memFreeAsync(dptr(p), s)); });
}

cudaError_t device_sync() {
  return with_driver(false, true, [&](const Driver& d) {
#if CUDA_VERSION >= 13000
    return to_rt(d.ctxSynchronize(nullptr));  // NULL: the current context
#else
    return to_rt(d.ctxSynchronize());
#endif
  });
}

// cudaGetDriverEntryPoint*: a symbol the driver lacks is cudaSuccess with *funcPtr = NULL (as documented).
cudaError_t entry_point(const char* symbol, void** funcPtr, unsigned cudaVersion, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* driverStatus) {
  if (symbol == nullptr || funcPtr == nullptr) return note(cudaErrorInvalidValue);
  const Runtime* r = runtime();
  if (r == nullptr) return note(cudaErrorInsufficientDriver);
  CUdriverProcAddressQueryResult status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  CUresult res = r->getProcAddress(symbol, funcPtr, static_cast<int>(cudaVersion), flags, &status);
  if (driverStatus) *driverStatus = static_cast<cudaDriverEntryPointQueryResult>(status);
  return note(res == CUDA_ERROR_NOT_FOUND ? cudaSuccess : to_rt(res));
}

// The _ptsz entry-point lookups: cudaEnableDefault means per-thread there.
unsigned long long per_thread_default(unsigned long long flags) {
  const unsigned long long stream_bits = cudaEnableLegacyStream | cudaEnablePerThreadDefaultStream;
  return (flags & stream_bits) == 0 ? flags | cudaEnablePerThreadDefaultStream : flags;
}

}  // namespace

// ================================================================ memory
FCRT_EXPORT cudaError_t CUDARTAPI cudaMalloc(void** devPtr, size_t size) {
  if (devPtr == nullptr) return note(cudaErrorInvalidValue);
  if (size == 0) {  // like cudart: success with a NULL pointer, no driver call
    *devPtr = nullptr;
    return cudaSuccess;
  }
  return with_driver(false, true, [&](const Driver& d) {
    CUdeviceptr p = 0;
    CUresult r = d.memAlloc(&p, size);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
    return to_rt(r);
  });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaFree(void* devPtr) {
  if (devPtr == nullptr) return cudaSuccess;
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.memFree(dptr(devPtr))); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaMallocHost(void** ptr, size_t size) {
  if (ptr == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.memAllocHost(ptr, size)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaFreeHost(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.memFreeHost(ptr)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (pHost == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.memHostAlloc(pHost, size, flags)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  if (devPtr == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) {
    CUdeviceptr p = 0;
    CUresult r = d.memAllocManaged(&p, size, flags);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
    return to_rt(r);
  });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  if (devPtr == nullptr || pitch == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) {
    CUdeviceptr p = 0;
    CUresult r = d.memAllocPitch(&p, pitch, width, height, 16);
    if (r == CUDA_SUCCESS) *devPtr = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
    return to_rt(r);
  });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync(void** devPtr, size_t size, cudaStream_t hStream) {
  if (devPtr == nullptr) return note(cudaErrorInvalidValue);
  return malloc_async(false, devPtr, size, hStream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMallocAsync_ptsz(void** devPtr, size_t size, cudaStream_t hStream) {
  if (devPtr == nullptr) return note(cudaErrorInvalidValue);
  return malloc_async(true, devPtr, size, hStream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync(void* devPtr, cudaStream_t hStream) {
  return free_async(false, devPtr, hStream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaFreeAsync_ptsz(void* devPtr, cudaStream_t hStream) {
  return free_async(true, devPtr, hStream);
}

// ================================================================ copies, memsets
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return memcpy_sync(false, dst, src, count, kind);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemcpy_ptds(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  return memcpy_sync(true, dst, src, count, kind);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                                                  cudaStream_t stream) {
  return memcpy_async(false, dst, src, count, kind, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync_ptsz(void* dst, const void* src, size_t count,
                                                       enum cudaMemcpyKind kind, cudaStream_t stream) {
  return memcpy_async(true, dst, src, count, kind, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemset(void* devPtr, int value, size_t count) {
  return memset_sync(false, devPtr, value, count);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemset_ptds(void* devPtr, int value, size_t count) {
  return memset_sync(true, devPtr, value, count);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return memset_async(false, devPtr, value, count, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync_ptsz(void* devPtr, int value, size_t count, cudaStream_t stream) {
  return memset_async(true, devPtr, value, count, stream);
}

// ================================================================ launches
FCRT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                   size_t sharedMem, cudaStream_t stream) {
  return launch(false, func, gridDim, blockDim, args, sharedMem, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaLaunchKernel_ptsz(const void* func, dim3 gridDim, dim3 blockDim, void** args,
                                                        size_t sharedMem, cudaStream_t stream) {
  return launch(true, func, gridDim, blockDim, args, sharedMem, stream);
}

// ================================================================ synchronisation, streams, events
FCRT_EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void) { return device_sync(); }
#if CUDA_VERSION < 13000
FCRT_EXPORT cudaError_t CUDARTAPI cudaThreadSynchronize(void) { return device_sync(); }
#endif

FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream) { return stream_sync(false, stream); }
FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize_ptsz(cudaStream_t stream) { return stream_sync(true, stream); }
FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream) { return stream_query(false, stream); }
FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamQuery_ptsz(cudaStream_t stream) { return stream_query(true, stream); }

FCRT_EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event) {
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.eventSynchronize(event)); });
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event) {
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.eventQuery(event)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t* pStream) {
  if (pStream == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.streamCreate(pStream, 0)); });
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  if (pStream == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.streamCreate(pStream, flags)); });
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream) {
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.streamDestroy(stream)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t* event) {
  if (event == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.eventCreate(event, 0)); });
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return event_record(false, event, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaEventRecord_ptsz(cudaEvent_t event, cudaStream_t stream) {
  return event_record(true, event, stream);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event) {
  return with_driver(false, true, [&](const Driver& d) { return to_rt(d.eventDestroy(event)); });
}

// ================================================================ driver entry points
FCRT_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                                          enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, CUDA_VERSION, flags, driverStatus);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPoint_ptsz(const char* symbol, void** funcPtr,
                                                               unsigned long long flags,
                                                               enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, CUDA_VERSION, per_thread_default(flags), driverStatus);
}
FCRT_EXPORT cudaError_t CUDARTAPI cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                                                   unsigned int cudaVersion, unsigned long long flags,
                                                                   enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, cudaVersion, flags, driverStatus);
}
FCRT_EXPORT cudaError_t CUDARTAPI
cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                                      unsigned long long flags, enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entry_point(symbol, funcPtr, cudaVersion, per_thread_default(flags), driverStatus);
}

// ================================================================ versions, errors
FCRT_EXPORT cudaError_t CUDARTAPI cudaRuntimeGetVersion(int* runtimeVersion) {
  if (runtimeVersion == nullptr) return note(cudaErrorInvalidValue);
  *runtimeVersion = CUDA_VERSION;
  return cudaSuccess;
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaDriverGetVersion(int* driverVersion) {
  if (driverVersion == nullptr) return note(cudaErrorInvalidValue);
  return with_driver(false, false, [&](const Driver& d) { return to_rt(d.driverGetVersion(driverVersion)); });
}

FCRT_EXPORT cudaError_t CUDARTAPI cudaGetLastError(void) {
  cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}

FCRT_EXPORT const char* CUDARTAPI cudaGetErrorString(cudaError_t error) {
  switch (error) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInitializationError: return "initialization error";
    case cudaErrorInsufficientDriver: return "CUDA driver version is insufficient for CUDA runtime version";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorNotSupported: return "operation not supported";
    case cudaErrorUnknown: return "unknown error";
    default: return "unrecognized error code";
  }
}
