// resolve.h: the real function behind each hooked ABI, and our wrapper for it.
#pragma once
#include <atomic>

#include "catalog/hooks.h"
#include "shim/cuda_abi.h"

namespace cudashim::shim {

extern std::atomic<void*> g_real[kHookCount];

// True when CUDASHIM_DISABLE=1 or the process is setuid/setgid (AT_SECURE): no
// wrapper is handed out through dlsym or cuGetProcAddress and nothing is written.
extern std::atomic<bool> g_inert;
extern void* const g_wrappers[kHookCount];

// Slow path of real_of(): finds the real function (RTLD_NEXT, then the loaded
// libcuda/libcudart). Returns nullptr when the process has none.
void* resolve_real(HookId id);

// Returns the real function for `id`. Hot path: one relaxed atomic load.
inline void* real_of(HookId id) {
  void* p = g_real[static_cast<size_t>(id)].load(std::memory_order_acquire);
  return __builtin_expect(p != nullptr, 1) ? p : resolve_real(id);
}

// Offers `real` as the real function of `id`. Returns true when it is (now) the
// one cudashim forwards to, false when another library copy already provided a
// different one (the caller then passes `real` through, unwrapped). Pins the
// library that holds `real` so a dlclose cannot leave a dangling pointer.
// pre: real is not inside libcudashim.
bool adopt_real(HookId id, void* real);

// Returns our wrapper of `id`.
inline void* wrapper_of(HookId id) { return g_wrappers[static_cast<size_t>(id)]; }

// Returns the hook whose real driver function is `addr`, or HookId::kCount.
HookId hook_of_real(const void* addr);

// Fills every unresolved driver row from the libcuda that holds `real_resolver`
// (the real cuGetProcAddress), so returned addresses can be mapped to ABIs.
void adopt_driver_from(const void* real_resolver);

// Returns a real driver function that cudashim does not hook (cuPointerGetAttribute,
// cuCtxGetDevice), from the global scope or the loaded libcuda; nullptr if none.
void* driver_function(const char* name);

// Returns the device ordinal an allocation belongs to: `device` unless it is
// kCurrentDevice, then the current context's device (or the pointer's, or 0).
int device_for(int device, unsigned long long key);

// Logs a policy denial (rate-limited: the first few, then every 1000th).
void note_denied(HookId id, int device, unsigned long long bytes);

// Logs (once per hook) that a wrapper was called with no real function behind it.
void note_missing_real(HookId id);

}  // namespace cudashim::shim
