// events.cpp: the interposition counters (recorder/events.h) and their names.
#include "recorder/events.h"

namespace cudashim::recorder {

constinit std::atomic<uint64_t> g_events[kEventCount]{};

const char* event_name(Event e) {
  static constexpr const char* kNames[] = {
#define CUDASHIM_EVENT_NAME(name, doc) #name,
      CUDASHIM_EVENTS(CUDASHIM_EVENT_NAME)
#undef CUDASHIM_EVENT_NAME
  };
  return kNames[static_cast<int>(e)];
}

const char* event_doc(Event e) {
  static constexpr const char* kDocs[] = {
#define CUDASHIM_EVENT_DOC(name, doc) doc,
      CUDASHIM_EVENTS(CUDASHIM_EVENT_DOC)
#undef CUDASHIM_EVENT_DOC
  };
  return kDocs[static_cast<int>(e)];
}

}  // namespace cudashim::recorder
