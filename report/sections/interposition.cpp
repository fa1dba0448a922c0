// interposition.cpp: the report's "interposition" section: what the interposition layer
// did (recorder/events.h), every counter, zero or not.
#include "recorder/events.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_interposition(JsonWriter& w, const ReportContext&) {
  auto o = w.object();
  for (int e = 0; e < recorder::kEventCount; ++e)
    w.member(recorder::event_name(static_cast<recorder::Event>(e)), recorder::g_events[e].load(std::memory_order_relaxed));
}

}  // namespace cudashim::report
