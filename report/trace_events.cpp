// trace_events.cpp: see trace_events.h.
#include "report/trace_events.h"

#include <fmt/format.h>

namespace cudashim::report {
namespace {

JsonFixed us(double v) { return JsonFixed{v, 3}; }

}  // namespace

void TraceEvents::process_name() {
  auto o = w_.object();
  w_.member("ph", "M");
  w_.member("pid", pid_);
  w_.member("name", "process_name");
  w_.key("args");
  auto args = w_.object();
  w_.member("name", fmt::format("cudashim pid {}", pid_));
}

void TraceEvents::add(const TraceThreadName& e) {
  auto o = w_.object();
  w_.member("ph", "M");
  w_.member("pid", pid_);
  w_.member("tid", e.tid);
  w_.member("name", "thread_name");
  w_.key("args");
  auto args = w_.object();
  w_.member("name", fmt::format("thread {}", e.tid));
}

void TraceEvents::add(const TraceCall& e) {
  auto o = w_.object();
  w_.member("ph", "X");
  w_.member("pid", pid_);
  w_.member("tid", e.tid);
  w_.member("name", e.api);
  w_.member("cat", e.family);
  w_.member("ts", us(e.ts_us));
  w_.member("dur", us(e.dur_us));
  w_.key("args");
  auto args = w_.object();
  w_.key("where");
  if (e.where) w_.value(*e.where); else w_.null();
}

void TraceEvents::add(const TraceDeviceMemory& e) {
  auto o = w_.object();
  w_.member("ph", "C");
  w_.member("pid", pid_);
  w_.member("name", fmt::format("device {} memory", e.device));
  w_.member("ts", us(e.ts_us));
  w_.key("args");
  auto args = w_.object();
  w_.member("live_bytes", e.live_bytes);
}

void TraceEvents::add(const TraceGpuCounter& e) {
  auto o = w_.object();
  w_.member("ph", "C");
  w_.member("pid", pid_);
  w_.member("name", fmt::format("gpu {} {}", e.device, e.track));
  w_.member("ts", us(e.ts_us));
  w_.key("args");
  auto args = w_.object();
  for (int i = 0; i < 2 && e.names[i] != nullptr; ++i) w_.member(e.names[i], JsonFixed{e.values[i], 1});
}

void TraceEvents::add(const TraceGpuEvent& e) {
  auto o = w_.object();
  w_.member("ph", "i");
  w_.member("s", "p");
  w_.member("pid", pid_);
  w_.member("tid", 0);
  w_.member("name", fmt::format("gpu {} {} {}", e.device, e.kind, e.data));
  w_.member("cat", "gpu");
  w_.member("ts", us(e.ts_us));
  w_.key("args");
  auto args = w_.object();
  w_.member("device", e.device);
  w_.member("data", e.data);
}

void TraceEvents::add(const TraceFinding& e) {
  auto o = w_.object();
  w_.member("ph", "i");
  w_.member("s", "p");
  w_.member("pid", pid_);
  w_.member("tid", 0);
  w_.member("name", e.id);
  w_.member("ts", us(e.ts_us));
  w_.key("args");
  auto args = w_.object();
  w_.member("where", e.where);
  w_.member("fix", e.fix);
}

void TraceEvents::add(const TraceLibrary& e) {
  auto o = w_.object();
  w_.member("ph", "i");
  w_.member("s", "p");
  w_.member("pid", pid_);
  w_.member("tid", 0);
  w_.member("name", fmt::format("{} {}", e.load ? "load" : "unload", e.family));
  w_.member("cat", "library");
  w_.member("ts", us(e.ts_us));
  w_.key("args");
  auto args = w_.object();
  w_.member("path", e.path);
  w_.member("version", e.version);
}

}  // namespace cudashim::report
