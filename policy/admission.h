// admission.h: the allocator policy at the moment of an allocation.
//
// The shim asks admit() before calling the real allocator and tells commit() or
// rollback() after. admit() charges the ledger atomically against the device's
// cap, so many threads allocating against one cap never exceed it. A refusal is
// answered with CUDA_ERROR_OUT_OF_MEMORY by the shim on every path, async ones
// included: PyTorch frees its cache and retries on that code only (any other code ends
// as "unrecognized error").
#pragma once
#include <atomic>
#include <cstdint>

#include "policy/policy.h"
#include "catalog/mem_kinds.h"
#include "catalog/hooks.h"

namespace cudashim::policy {

// What the shim tells the policy about the device (from the real driver).
struct DeviceQueries {
  uint64_t (*total_bytes)(int device);  // cuDeviceTotalMem_v2; 0 when unknown
  uint64_t (*free_bytes)(int device);   // cuMemGetInfo_v2 of the current context; 0 when unknown
};

// Installs the process policy for admission (called once, at start-up).
void configure_admission(const Policy& p, DeviceQueries q);

// Returns the cap of `device` in bytes (0 = none), resolving a fractional cap
// against the device's memory on first use.
uint64_t cap_of(int device);

enum class Verdict { admit, deny_cap, deny_managed, deny_oversubscription };

// Decides an allocation of `bytes` of `kind` on `device` and, when admitted,
// charges it to the ledger. pre: kind is an allocation kind.
Verdict admit(HookId api, MemKind kind, int device, uint64_t bytes);

// admit() without the out-of-memory record: for a caller that will free cached memory
// and ask again (the pool), so that only the final refusal counts as an OOM.
Verdict try_admit(MemKind kind, int device, uint64_t bytes);

// rollback() without the out-of-memory record (the caller retries).
void uncharge(MemKind kind, int device, uint64_t charged);

// The real allocation succeeded: remember `key` (charged as `charged` bytes,
// corrected to the `bytes` the driver really gave).
void commit(MemKind kind, uint64_t key, uint64_t bytes, uint64_t charged, int device);

// The real allocation failed with `result`: take the charge back, and record an
// out-of-memory event when result is CUDA_ERROR_OUT_OF_MEMORY.
void rollback(HookId api, MemKind kind, int device, uint64_t charged, uint64_t result);

// The capped views of cuMemGetInfo_v2 and cuDeviceTotalMem_v2 (free never
// negative; either pointer may be null).
void cap_mem_info(int device, size_t* free, size_t* total);
void cap_total_mem(int device, size_t* bytes);

// True when a managed allocation should also produce a warning (policy "warn").
bool warn_on_managed();

// ---- the opt-in caching pool (CUDASHIM_POOL, docs/pool.md)

// Set once by configure_admission(); read on launch and copy paths (one relaxed load).
extern std::atomic<bool> g_pool_on;

// True when the pool is on. Hot path: one relaxed load, no call.
inline bool pool_enabled() { return g_pool_on.load(std::memory_order_relaxed); }

// The most bytes `device` may keep in cached, unused blocks (POOL_MAX_CACHED resolved
// against the device's memory), and the largest allocation the pool takes (POOL_MAX_BLOCK).
uint64_t pool_max_cached(int device);
uint64_t pool_max_block(int device);

}  // namespace cudashim::policy
