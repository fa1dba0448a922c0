// trace.h: the Chrome/Perfetto trace of a process (opens in ui.perfetto.dev and
// chrome://tracing): blocking and timed calls as slices named by API with their call
// site, device memory as a counter track, findings and library loads as instant events.
#pragma once
#include <cstdint>
#include <string>

namespace cudashim::report {

// Returns the trace as Chrome JSON trace format ({"traceEvents": [...]}).
// `start_ticks`: the hook clock at start-up (slices are placed relative to it);
// `start_mono_ns`: the monotonic clock then (library events are placed relative to it).
std::string render_trace(int pid, uint64_t start_ticks, uint64_t start_mono_ns);

}  // namespace cudashim::report
