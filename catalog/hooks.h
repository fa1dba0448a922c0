// catalog/hooks.h: the hook table (catalog/hooks.def) as data: ids, names, families,
// directions, what is recorded, roles. No CUDA header and no state: every layer reads it,
// the wrappers in shim/ expand the same rows with their CUDA types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudashim {

// What a call is about.
enum class Family : uint8_t { memory, sync, copy, launch, stream, context, module, resolve, info };
inline constexpr const char* kFamilyNames[] = {"memory", "sync", "copy", "launch", "stream",
                                               "context", "module", "resolve", "info"};
// Returns the family's name as reports and docs spell it.
constexpr const char* family_name(Family f) { return kFamilyNames[static_cast<int>(f)]; }

// What the recorder is told (catalog/rec_kinds.def).
enum class RecKind : uint8_t {
#define CUDASHIM_REC_KIND(NAME, WHAT) NAME,
#include "catalog/rec_kinds.def"
};
// Returns what a row of this kind records, in words (`cudashim hooks`, docs/hooks.md).
const char* rec_kind_text(RecKind k);

// Which way a copy goes (read-back and pageable-memory findings). In a row: the direction
// the ABI fixes (UNKNOWN when it does not); in a call's facts: the call's own.
enum class CopyDir : uint8_t { UNKNOWN, H2D, D2H, D2D, MEMSET };

// NONE: no clock read. BLOCKING: wall time, counted as blocked. TIMED: wall time, not a sync.
enum class Timing : uint8_t { NONE, BLOCKING, TIMED };
// Returns how a row of this timing is measured, in words.
const char* timing_text(Timing t);

// What rules need to know of a row beyond its family and kind.
enum HookRole : uint16_t {
  ROLE_NONE = 0,
  ROLE_PINNED_HOST = 1 << 0,    // allocates or frees page-locked host memory
  ROLE_DEVICE_FREE = 1 << 1,    // gives device memory back to the driver (synchronizes the device)
  ROLE_POOL_ROUTED = 1 << 2,    // taken over whole by the opt-in pool (shim/pool.h)
  ROLE_RUNTIME_ALLOC = 1 << 3,  // a runtime allocation whose driver allocation is made under it
  ROLE_STREAM_FREE = 1 << 4,    // a stream-ordered free (the pool forgets the pointer)
  ROLE_DEPRECATED = 1 << 5,     // a deprecated API (finding api.deprecated-sync)
};

// HookId: one value per exact ABI symbol, driver rows first, then runtime rows.
enum class HookId : uint16_t {
#define CUDASHIM_DRIVER(NAME, ...) NAME,
#define CUDASHIM_RUNTIME(NAME, ...) NAME,
#include "catalog/hooks.def"
  kCount
};
inline constexpr size_t kHookCount = static_cast<size_t>(HookId::kCount);

struct HookInfo {
  const char* name;  // exact exported ABI symbol
  Family family;
  CopyDir dir;  // the direction the ABI fixes, else UNKNOWN
  RecKind kind;
  Timing timing;
  uint16_t roles;   // HookRole bits
  bool runtime;     // a libcudart entry point (else a libcuda one)
  bool per_thread;  // a _ptsz/_ptds ABI: stream 0 means the per-thread default stream
  constexpr bool has(HookRole r) const { return (roles & r) != 0; }
  constexpr const char* layer() const { return runtime ? "runtime" : "driver"; }
};

// True when `name` ends in _ptsz or _ptds.
constexpr bool is_per_thread_name(std::string_view name) {
  return name.size() > 5 && (name.substr(name.size() - 5) == "_ptsz" || name.substr(name.size() - 5) == "_ptds");
}

inline constexpr HookInfo kHooks[kHookCount] = {
#define CUDASHIM_DRIVER(NAME, FAMILY, DIR, REC, TIMING, ROLES, ...) \
  {#NAME, Family::FAMILY, CopyDir::DIR, RecKind::REC, Timing::TIMING, ROLES, false, is_per_thread_name(#NAME)},
#define CUDASHIM_RUNTIME(NAME, FAMILY, DIR, REC, TIMING, ROLES, ...) \
  {#NAME, Family::FAMILY, CopyDir::DIR, RecKind::REC, Timing::TIMING, ROLES, true, is_per_thread_name(#NAME)},
#include "catalog/hooks.def"
};

// Returns the info row of `id`. pre: id < kCount.
constexpr const HookInfo& hook_info(HookId id) { return kHooks[static_cast<size_t>(id)]; }

// Returns the id of the hook named exactly `name`, or HookId::kCount when none.
// Allocation-free and lock-free; safe inside dlsym hooks.
HookId find_hook(std::string_view name);

// NVML's memory queries, answered from the ledger like cuMemGetInfo (shim/nvml_hooks.cpp).
// Not counted in the report's api table, which holds the driver and runtime rows only.
inline constexpr const char* kNvmlHooks[] = {"nvmlDeviceGetMemoryInfo", "nvmlDeviceGetMemoryInfo_v2"};
inline constexpr const char* kNvmlHookText =
    "not counted; total/free/used capped by the policy (device matched by PCI address)";

}  // namespace cudashim
