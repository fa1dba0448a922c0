// Shared by the translation units of the fake driver (libcuda.so.1); not for tests.
#pragma once

// Build the way the real driver is built: in this mode cuda.h drops its `#define cuMemAlloc
// cuMemAlloc_v2`-style renames and declares every exact ABI name (legacy, _v2, _ptds, _ptsz), and
// cudaTypedefs.h adds the PFN typedefs of the legacy ABIs. Each definition of ours is therefore
// checked by the compiler against the header's declaration of the same exact name.
// _ODR keeps the enums identical to what clients see (no internal *_MAX enumerators).
#if defined(__cuda_cuda_h__)
#error "include fakecuda_internal.h before cuda.h"
#endif
#define __CUDA_API_VERSION_INTERNAL 1
#define __CUDA_API_VERSION_INTERNAL_ODR 1
#include <cuda.h>
#include <cudaTypedefs.h>

#include <atomic>
#include <cstdint>

#include "tests/fakecuda/fakecuda_control.h"

// Defines an exported entry point (the library is built with -fvisibility=hidden).
#define FC_EXPORT extern "C" __attribute__((visibility("default")))

namespace fc {

// One enumerator per exported ABI symbol, in table order: k_cuMemAlloc_v2, k_cuStreamQuery_ptsz, ...
enum Sym : unsigned {
#define FAKECUDA_ABI(base, abi, version) k_##abi,
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix) k_##abi, k_##pt_abi,
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT
  kSymCount
};

// A call counter on its own cache line, so that threads calling different entry points do not share one.
struct alignas(64) Counter {
  std::atomic<uint64_t> n{0};
};
extern Counter g_counts[kSymCount];

// Nanoseconds every synchronizing entry point sleeps (fakecuda_set_sync_delay_ns).
extern std::atomic<uint64_t> g_sync_delay_ns;

// Records one call of the entry point `s` (relaxed: a statistic, not a synchronisation).
inline void count(Sym s) { g_counts[s].n.fetch_add(1, std::memory_order_relaxed); }

}  // namespace fc

// FC_ENTRY(abi, (params), expr): defines the exported `CUresult abi(params)` that counts its own call
// and returns `expr`. FC_ENTRY_PT(abi, pt_abi, (params), expr) defines the same body under both the
// ABI name and its per-thread twin (each counts under its own name).
#define FC_ENTRY(abi, params, ...)        \
  FC_EXPORT CUresult CUDAAPI abi params { \
    ::fc::count(::fc::k_##abi);           \
    return __VA_ARGS__;                   \
  }
#define FC_ENTRY_PT(abi, pt_abi, params, ...) \
  FC_ENTRY(abi, params, __VA_ARGS__)          \
  FC_ENTRY(pt_abi, params, __VA_ARGS__)
