// events.h: process-wide counters of what the interposition layer did.
// Not on a hot path (dlsym, cuGetProcAddress, dlopen): one relaxed fetch_add each.
#pragma once
#include <atomic>
#include <cstdint>

namespace cudashim::recorder {

#define CUDASHIM_EVENTS(E)                                                                         \
  E(dlsym_substituted, "dlsym/dlvsym lookups of a hooked name answered with cudashim's wrapper")  \
  E(dlsym_passthrough, "dlsym/dlvsym lookups passed to the loader untouched")                      \
  E(dlsym_from_driver, "hooked names looked up by libcuda itself (seen on WSL2), passed through")  \
  E(procaddr_substituted, "cuGetProcAddress results replaced by the wrapper of the exact ABI")     \
  E(procaddr_passthrough, "cuGetProcAddress results for symbols cudashim does not hook")           \
  E(procaddr_unmatched_hooked, "hooked ABI names whose driver result matched no exported function")  \
  E(procaddr_already_wrapped, "cuGetProcAddress results that already were a cudashim wrapper")    \
  E(procaddr_failed, "cuGetProcAddress calls the real driver answered with an error")              \
  E(real_conflicts, "a second copy of a library offered another real function: passed through")   \
  E(dlopen_calls, "dlopen and dlmopen calls")                                                      \
  E(libcuda_dlopen_requests, "dlopen calls asking for libcuda (loaded or not: no driver is a finding)")                                                      \
  E(dlclose_calls, "dlclose calls")                                                                \
  E(blocking_streams_created, "streams created without CU_STREAM_NON_BLOCKING (they wait on the legacy stream)") \
  E(blocking_sync_flag, "contexts created or configured with CU_CTX_BLOCKING_SYNC (cudaDeviceBlockingSync)") \
  E(launch_blocking_env, "CUDA_LAUNCH_BLOCKING=1 was set when the process started")

enum class Event : uint8_t {
#define CUDASHIM_EVENT_ID(name, doc) name,
  CUDASHIM_EVENTS(CUDASHIM_EVENT_ID)
#undef CUDASHIM_EVENT_ID
      kCount
};
inline constexpr int kEventCount = static_cast<int>(Event::kCount);

extern std::atomic<uint64_t> g_events[kEventCount];

// Counts one occurrence of `e`.
inline void count_event(Event e) { g_events[static_cast<int>(e)].fetch_add(1, std::memory_order_relaxed); }

// Returns the report name and the one-line description of `e`.
const char* event_name(Event e);
const char* event_doc(Event e);

}  // namespace cudashim::recorder
