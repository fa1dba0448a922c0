// events.h: process-wide counters of what the interposition layer did.
// Not on a hot path (dlsym, cuGetProcAddress, dlopen): one relaxed fetch_add each.
#pragma once
#include <atomic>
#include <cstdint>

namespace cudashim::recorder {

// One value per row of catalog/events.def.
enum class Event : uint8_t {
#define CUDASHIM_EVENT(NAME, DOC) NAME,
#include "catalog/events.def"
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
