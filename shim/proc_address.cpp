// proc_address.cpp: cuGetProcAddress in both ABIs, and the wrapper address table.
//
// libcudart (static or shared) fetches every driver entry point through
// cuGetProcAddress. The real resolver runs first with the caller's exact
// arguments (version, flags, symbolStatus are honored and reported as the driver
// said); only then is a successful result replaced, by the wrapper of the exact ABI
// the driver returned (cuMemAlloc vs cuMemAlloc_v2, cuStreamSynchronize vs
// cuStreamSynchronize_ptsz), found by address. Requests for cuGetProcAddress itself
// come back wrapped the same way. Unknown results (cuGetExportTable, unhooked APIs)
// pass through untouched, and a result that already is a wrapper is never wrapped again
// (a driver may dlsym its own handle, seen on WSL2). Peers that hook CUDA broke on each
// of these; the resolver's contract: CUDA C++ Programming Guide, "Driver Entry Point Access".
#include <dlfcn.h>

#include "recorder/events.h"
#include "recorder/library_log.h"
#include "shim/real_dl.h"
#include "shim/on_call.h"

namespace rec = cudashim::recorder;
using cudashim::HookId;

// Declarations of every wrapper, so their addresses can be taken below.
#define CUDASHIM_DRIVER(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PFN, PARAMS, ARGS, REC) \
  extern "C" CUresult CUDAAPI NAME PARAMS;
#define CUDASHIM_RUNTIME(NAME, FAMILY, DIR, KIND, TIMING, ROLES, PARAMS, ARGS, REC) \
  extern "C" cudaError_t CUDARTAPI NAME PARAMS;
#include "catalog/hooks.def"

namespace cudashim::shim {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // &cudaThreadSynchronize, on purpose
void* const g_wrappers[kHookCount] = {
#define CUDASHIM_DRIVER(NAME, ...) reinterpret_cast<void*>(&::NAME),
#define CUDASHIM_RUNTIME(NAME, ...) reinterpret_cast<void*>(&::NAME),
#include "catalog/hooks.def"
};
#pragma GCC diagnostic pop

namespace {

std::atomic<bool> g_driver_adopted{false};

// Notes the module that asked (cuGetProcAddress is called at start-up, not in loops:
// a dladdr per call is affordable here).
void note_procaddr_caller(const void* caller, int cuda_version) {
  Dl_info info;
  if (caller != nullptr && dladdr(caller, &info) != 0) rec::log_procaddr_caller(info.dli_fbase, caller, cuda_version);
}

// Replaces a resolved driver function by our wrapper of the same exact ABI.
void* substitute(const char* symbol, void* fn, void* real_resolver) {
  if (g_inert.load(std::memory_order_relaxed)) return fn;
  if (is_own_address(fn)) {
    rec::count_event(rec::Event::procaddr_already_wrapped);
    return fn;
  }
  if (!g_driver_adopted.load(std::memory_order_acquire)) {
    adopt_driver_from(real_resolver);
    g_driver_adopted.store(true, std::memory_order_release);
  }
  const HookId id = hook_of_real(fn);
  if (id == HookId::kCount) {
    rec::count_event(rec::Event::procaddr_passthrough);
    // A hooked exact name whose result matched no known real function: the driver
    // handed out an address its exports do not have. Visible in the report.
    if (symbol != nullptr && ::cudashim::find_hook(symbol) != HookId::kCount)
      rec::count_event(rec::Event::procaddr_unmatched_hooked);
    return fn;
  }
  rec::count_event(rec::Event::procaddr_substituted);
  return wrapper_of(id);
}

}  // namespace
}  // namespace cudashim::shim

using namespace cudashim::shim;

extern "C" CUDASHIM_EXPORT CUresult CUDAAPI cuGetProcAddress_v2(const char* symbol, void** pfn, int cudaVersion,
                                                                 cuuint64_t flags,
                                                                 CUdriverProcAddressQueryResult* symbolStatus) {
  const auto real = reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_of(HookId::cuGetProcAddress_v2));
  if (real == nullptr) {
    note_missing_real(HookId::cuGetProcAddress_v2);
    return CUDA_ERROR_NOT_FOUND;
  }
  rec::CallScope scope(HookId::cuGetProcAddress_v2);
  // A caller other than libcudart or the driver carries a CUDA runtime linked in
  // statically; cudaVersion is that runtime's version (the inventory lists it).
  note_procaddr_caller(__builtin_return_address(0), cudaVersion);
  const CUresult r = real(symbol, pfn, cudaVersion, flags, symbolStatus);
  if (r == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr)
    *pfn = substitute(symbol, *pfn, reinterpret_cast<void*>(real));
  else
    rec::count_event(rec::Event::procaddr_failed);
  scope.finish(r, 0);
  return r;
}

extern "C" CUDASHIM_EXPORT CUresult CUDAAPI cuGetProcAddress(const char* symbol, void** pfn, int cudaVersion,
                                                              cuuint64_t flags) {
  const auto real = reinterpret_cast<PFN_cuGetProcAddress_v11030>(real_of(HookId::cuGetProcAddress));
  if (real == nullptr) {
    note_missing_real(HookId::cuGetProcAddress);
    return CUDA_ERROR_NOT_FOUND;
  }
  rec::CallScope scope(HookId::cuGetProcAddress);
  // A caller other than libcudart or the driver carries a CUDA runtime linked in
  // statically; cudaVersion is that runtime's version (the inventory lists it).
  note_procaddr_caller(__builtin_return_address(0), cudaVersion);
  const CUresult r = real(symbol, pfn, cudaVersion, flags);
  if (r == CUDA_SUCCESS && pfn != nullptr && *pfn != nullptr)
    *pfn = substitute(symbol, *pfn, reinterpret_cast<void*>(real));
  else
    rec::count_event(rec::Event::procaddr_failed);
  scope.finish(r, 0);
  return r;
}

static_assert(std::is_same_v<decltype(&cuGetProcAddress_v2), PFN_cuGetProcAddress_v12000>);
static_assert(std::is_same_v<decltype(&cuGetProcAddress), PFN_cuGetProcAddress_v11030>);
