// trace_events.h: the events of the Chrome/Perfetto trace (Chrome's JSON trace format:
// ui.perfetto.dev and chrome://tracing open it), one struct per kind of event; TraceEvents
// writes them, so no caller writes JSON. Times are microseconds since start-up.
#pragma once
#include <cstdint>
#include <string>

#include "recorder/json_writer.h"

namespace cudashim::report {

// A thread's track name ("thread <tid>"): before its slices.
struct TraceThreadName {
  uint32_t tid;
};
// A blocking or timed call ("X"), named by its API, in its family's category.
struct TraceCall {
  uint32_t tid;
  const char* api;
  const char* family;
  double ts_us, dur_us;
  const std::string* where;  // its call site (policy::describe_site); nullptr: unknown
};
// A device-memory sample ("C"): the counter track "device <n> memory".
struct TraceDeviceMemory {
  int device;
  double ts_us;
  uint64_t live_bytes;
};
// A GPU counter sample ("C"): the counter track "gpu <device> <track>", one series per value
// (NVML's utilization and health samples, recorder/gpu_samples.h).
struct TraceGpuCounter {
  int device;
  const char* track;  // "busy %", "clocks MHz", "power W", "temperature C", "throttled"
  double ts_us;
  const char* names[2];  // the series; names[1] nullptr: one series
  double values[2];
};
// A critical GPU event ("i", process-wide, category "gpu"): an Xid or a double-bit ECC error.
struct TraceGpuEvent {
  int device;
  const char* kind;  // "xid", "double_bit_ecc"
  uint64_t data;
  double ts_us;
};
// A finding ("i", process-wide), when its site was first hit.
struct TraceFinding {
  const char* id;
  double ts_us;
  const std::string& where;
  const char* fix;
};
// A library load or unload ("i", process-wide, category "library"), as the watcher saw it.
struct TraceLibrary {
  bool load;
  const std::string& family;
  double ts_us;
  const std::string& path;
  const std::string& version;
};

// Writes events as elements of the open "traceEvents" array of `w`, all of process `pid`.
class TraceEvents {
 public:
  TraceEvents(JsonWriter& w, int pid) : w_(w), pid_(pid) {}
  void process_name();  // "cudashim pid <pid>": first
  void add(const TraceThreadName& e);
  void add(const TraceCall& e);
  void add(const TraceDeviceMemory& e);
  void add(const TraceGpuCounter& e);
  void add(const TraceGpuEvent& e);
  void add(const TraceFinding& e);
  void add(const TraceLibrary& e);

 private:
  JsonWriter& w_;
  int pid_;
};

}  // namespace cudashim::report
