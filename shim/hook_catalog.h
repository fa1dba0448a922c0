// hook_catalog.h: the hook table as data (ids, names, families, what is recorded).
// Generated from shim/hook_table.h; used by the wrappers, the recorder, the CLI's
// `cudashim hooks` listing and the exported-symbol test.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "shim/hook_table.h"

namespace cudashim {

// RESOLVE rows (cuGetProcAddress) have hand-written wrappers; they record like PASS.
// MEMINFO and TOTALMEM rows record like PASS; their results are capped by the policy.
// LAUNCH rows count launches on the legacy default stream; CTXFLAGS rows note
// CU_CTX_BLOCKING_SYNC.
enum class RecKind : uint8_t { PASS, ALLOC, FREE, COPY, RESOLVE, MEMINFO, TOTALMEM, LAUNCH, CTXFLAGS, STREAM, MODLOAD, DRVVER };

// Which way a copy goes (for read-back and pageable-memory findings).
enum class CopyDir : uint8_t { UNKNOWN, H2D, D2H, D2D, MEMSET };
enum class Timing : uint8_t { NONE, BLOCKING, TIMED };

// HookId: one value per exact ABI symbol, driver rows first, then runtime rows.
enum class HookId : uint16_t {
#define CUDASHIM_ID(NAME, ...) NAME,
  CUDASHIM_DRIVER_HOOKS(CUDASHIM_ID) CUDASHIM_RUNTIME_HOOKS(CUDASHIM_ID)
#undef CUDASHIM_ID
      kCount
};

inline constexpr size_t kHookCount = static_cast<size_t>(HookId::kCount);

struct HookInfo {
  const char* name;    // exact exported ABI symbol
  const char* family;  // memory, sync, copy, launch, stream, context, module, resolve, info
  RecKind kind;
  Timing timing;
  bool runtime;     // a libcudart entry point (else a libcuda one)
  bool per_thread;  // a _ptsz/_ptds ABI: stream 0 means the per-thread default stream
};

// True when `name` ends in _ptsz or _ptds.
constexpr bool is_per_thread_name(std::string_view name) {
  return name.size() > 5 && (name.substr(name.size() - 5) == "_ptsz" || name.substr(name.size() - 5) == "_ptds");
}

inline constexpr HookInfo kHooks[kHookCount] = {
#define CUDASHIM_DRV_INFO(NAME, FAMILY, KIND, TIMING, ...) \
  {#NAME, #FAMILY, RecKind::KIND, Timing::TIMING, false, is_per_thread_name(#NAME)},
#define CUDASHIM_RT_INFO(NAME, FAMILY, KIND, TIMING, ...) \
  {#NAME, #FAMILY, RecKind::KIND, Timing::TIMING, true, is_per_thread_name(#NAME)},
    CUDASHIM_DRIVER_HOOKS(CUDASHIM_DRV_INFO) CUDASHIM_RUNTIME_HOOKS(CUDASHIM_RT_INFO)
#undef CUDASHIM_DRV_INFO
#undef CUDASHIM_RT_INFO
};

// Returns the info row of `id`. pre: id < kCount.
constexpr const HookInfo& hook_info(HookId id) { return kHooks[static_cast<size_t>(id)]; }

// Returns the id of the hook named exactly `name`, or HookId::kCount when none.
// Allocation-free and lock-free; safe inside dlsym hooks.
HookId find_hook(std::string_view name);

}  // namespace cudashim
