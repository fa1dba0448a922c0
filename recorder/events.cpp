// events.cpp: the interposition counters (recorder/events.h) and their names.
#include "recorder/events.h"

namespace cudashim::recorder {

constinit std::atomic<uint64_t> g_events[kEventCount]{};

const char* event_name(Event e) {
  static constexpr const char* kNames[] = {
#define CUDASHIM_EVENT(NAME, DOC) #NAME,
#include "catalog/events.def"
  };
  return kNames[static_cast<int>(e)];
}

const char* event_doc(Event e) {
  static constexpr const char* kDocs[] = {
#define CUDASHIM_EVENT(NAME, DOC) DOC,
#include "catalog/events.def"
  };
  return kDocs[static_cast<int>(e)];
}

}  // namespace cudashim::recorder
