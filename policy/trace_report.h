// trace_report.h: the Chrome/Perfetto trace of a process (opens in ui.perfetto.dev
// and chrome://tracing): blocking and timed calls as slices named by API with their
// call site, device memory as a counter track, findings as instant events.
#pragma once
#include <string>

namespace cudashim::policy {

// Returns the trace as Chrome JSON trace format ({"traceEvents": [...]}).
// `start_ticks`: the hook clock at start-up (slices are placed relative to it).
std::string trace_json(int pid, uint64_t start_ticks, uint64_t start_mono_ns);

}  // namespace cudashim::policy
