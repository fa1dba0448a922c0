// device_queries.cpp: what the policy may ask the real driver about a device.
// Calls the real functions (never our wrappers: a capped view must not cap itself).
#include "policy/admission.h"
#include "shim/resolve.h"

namespace cudashim::shim {

// Returns the real device memory of `device` (cuDeviceTotalMem_v2), 0 when unknown.
uint64_t real_total_bytes(int device) {
  auto f = reinterpret_cast<PFN_cuDeviceTotalMem_v3020>(real_of(HookId::cuDeviceTotalMem_v2));
  size_t bytes = 0;
  return f != nullptr && f(&bytes, device) == CUDA_SUCCESS ? bytes : 0;
}

// Returns the real free memory of the current context's device, 0 when unknown.
uint64_t real_free_bytes(int /*device*/) {
  auto f = reinterpret_cast<PFN_cuMemGetInfo_v3020>(real_of(HookId::cuMemGetInfo_v2));
  size_t free = 0, total = 0;
  return f != nullptr && f(&free, &total) == CUDA_SUCCESS ? free : 0;
}

}  // namespace cudashim::shim
