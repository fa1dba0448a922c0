// gpu_time.cpp: the report's "gpu_time" section: how busy each GPU was over the run and its
// steady state (NVML's utilization samples), its health next to the work, the gpu.idle and
// gpu.clocks-throttled findings with their evidence, and the Xid and ECC events
// (docs/gpu-time.md, docs/report-schema.md). It renders what policy/rules/gpu_time.cpp decided
// (ReportContext::gpu): the diagnosis, its split of the idle time and its summary line.
#include <fmt/format.h>

#include <algorithm>

#include "policy/rules/gpu_time.h"
#include "recorder/gpu_intervals.h"
#include "recorder/gpu_samples.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

const char* mode_name(recorder::GpuSamplerState::Mode m) {
  switch (m) {
    case recorder::GpuSamplerState::kOff: return "off";
    case recorder::GpuSamplerState::kNoNvml: return "unavailable";
    case recorder::GpuSamplerState::kSampling: return "nvml";
    default: return "not_started";
  }
}

void write_share(JsonWriter& w, const policy::BusyShare& b, uint64_t start_mono_ns) {
  if (b.samples == 0) {
    w.null();
    return;
  }
  auto o = w.object();
  w.member("from_ns", b.from_ns > start_mono_ns ? b.from_ns - start_mono_ns : 0);
  w.member("to_ns", b.to_ns > start_mono_ns ? b.to_ns - start_mono_ns : 0);
  w.member("samples", b.samples);
  w.member("busy", JsonFixed{b.busy, 3});
  w.member("idle", JsonFixed{1.0 - b.busy, 3});
}

void write_sampling(JsonWriter& w) {
  const recorder::GpuSamplerState s = recorder::gpu_state();
  auto o = w.object();
  w.member("mode", mode_name(s.mode));
  w.member("reason", s.reason);
  w.member("devices", s.devices);
  w.member("device_samples", s.device_samples);
  w.member("process_samples", s.process_samples);
  w.member("events", s.events);
  w.member("dropped", recorder::gpu_dropped_samples());
}

const char* precise_mode_name(recorder::PreciseState::Mode m) {
  switch (m) {
    case recorder::PreciseState::kUnavailable: return "unavailable";
    case recorder::PreciseState::kCollecting: return "cupti";
    case recorder::PreciseState::kStoodAside: return "stood_aside";
    case recorder::PreciseState::kFailed: return "failed";
    default: return "off";
  }
}

void write_window(JsonWriter& w, const policy::PreciseWindow& b, uint64_t start_mono_ns) {
  auto o = w.object();
  w.member("from_ns", b.from_ns > start_mono_ns ? b.from_ns - start_mono_ns : 0);
  w.member("to_ns", b.to_ns > start_mono_ns ? b.to_ns - start_mono_ns : 0);
  w.member("busy_ns", b.busy_ns);
  w.member("busy", JsonFixed{b.busy(), 4});
  w.member("idle", JsonFixed{1.0 - b.busy(), 4});
}

// The precise mode (CUPTI activity records, shim/cupti_collector.cpp): its state, the clock
// offset it measured, and each device's busy union.
void write_precise(JsonWriter& w, const std::vector<policy::PreciseDeviceTime>& devices, uint64_t start_mono_ns,
                   const std::string& injection) {
  const recorder::PreciseState s = recorder::precise_state();
  auto o = w.object();
  w.member("mode", precise_mode_name(s.mode));
  w.member("asked", s.asked);
  w.member("reason", s.reason);
  w.member("library", s.library);
  w.member("found_by", s.found_by);
  w.member("tried", s.tried);
  w.key("other_profiler");
  if (s.client[0] != '\0') w.value(s.client);
  else if (!injection.empty()) w.value(injection);
  else w.null();
  w.key("stood_aside_ns");
  if (s.stood_aside_ns) w.value(s.stood_aside_ns > start_mono_ns ? s.stood_aside_ns - start_mono_ns : 0); else w.null();
  w.member("clock_offset_ns", s.clock_offset_ns);
  w.member("clock_error_ns", s.clock_error_ns);
  w.member("buffers", s.buffers);
  w.member("buffer_misses", s.buffer_misses);
  w.member("dropped", recorder::precise_dropped());
  w.member("short_kernel_ns", policy::gpu_time_thresholds().launch_cost_ns);
  w.key("devices");
  auto a = w.array();
  for (const auto& d : devices) {
    auto od = w.object();
    w.member("device", d.device);
    w.key("run");
    write_window(w, d.run, start_mono_ns);
    w.key("steady");
    write_window(w, d.steady, start_mono_ns);
    w.member("kernels", d.kernels);
    w.member("short_kernels", d.short_kernels);
    w.member("short_kernel_share", JsonFixed{d.short_share(), 3});
    w.member("kernel_ns", d.kernel_ns);
    w.member("copies", d.copies);
    w.member("memsets", d.memsets);
    w.key("contexts");
    auto ac = w.array();
    for (const auto& c : d.contexts) {
      auto oc = w.object();
      w.member("context", static_cast<uint64_t>(c.context));
      w.member("busy_ns", c.run.busy_ns);
      w.member("busy", JsonFixed{c.run.busy(), 4});
    }
  }
}

void write_clock(JsonWriter& w, const ReportContext& c) {
  auto o = w.object();
  w.member("base", "CLOCK_MONOTONIC");
  w.member("start_unix_ns", c.process.start_unix_ns);
  w.member("start_mono_ns", c.process.start_mono_ns);
}

// The split of the steady state's idle share (null without a diagnosis): shares of the window
// that add up to `idle`, and the step they are drawn against.
void write_split(JsonWriter& w, const policy::GpuDeviceTime& d) {
  const policy::IdleSplit& s = d.split;
  if (s.window_ns == 0) {
    w.null();
    return;
  }
  auto o = w.object();
  w.member("idle", JsonFixed{s.idle, 4});
  w.member("after_syncs", JsonFixed{s.after_syncs, 4});
  w.member("host_between", JsonFixed{s.host_between, 4});
  w.member("unexplained", JsonFixed{s.unexplained, 4});
  w.member("window_ns", s.window_ns);
  w.member("steps", s.steps);
  w.member("step_ns", static_cast<uint64_t>(s.step_ns));
  w.member("launches_per_step", JsonFixed{s.launches_per_step, 1});
  w.member("host_ns_per_launch", static_cast<uint64_t>(s.host_ns_per_launch));
}

void write_device(JsonWriter& w, const policy::GpuDeviceTime& d, uint64_t start_mono_ns) {
  auto o = w.object();
  w.member("device", d.device);
  w.member("sample_period_us", d.sample_period_ns / 1000);
  w.key("run");
  write_share(w, d.run, start_mono_ns);
  w.key("steady");
  write_share(w, d.steady, start_mono_ns);
  w.key("process_run");
  write_share(w, d.process_run, start_mono_ns);
  w.key("process_steady");
  write_share(w, d.process_steady, start_mono_ns);
  w.key("health");
  {
    auto h = w.object();
    w.member("samples", d.health_samples);
    w.member("throttled_samples", d.throttled_samples);
    w.member("slowdown_reasons", policy::clock_event_names(d.slowdown_reasons));
    w.member("sm_mhz_min", d.sm_mhz_min);
    w.member("sm_mhz_max", d.sm_mhz_max);
    w.member("temp_c_max", d.temp_c_max);
    w.member("power_mw_max", d.power_mw_max);
    w.member("power_limit_mw", d.power_limit_mw);
    w.member("mem_used_max", d.mem_used_max);
  }
  w.member("diagnosis", d.diagnosis);
  w.member("diagnosis_from", d.has_precise ? "cupti" : "nvml");
  w.member("idle_lower_bound", d.idle_lower_bound);
  w.key("idle_split");
  write_split(w, d);
  w.member("summary", d.summary);
  w.key("evidence");
  {
    auto a = w.array();
    for (const auto& e : d.evidence) w.value(e);
  }
}

}  // namespace

void write_gpu_time(JsonWriter& w, const ReportContext& c) {
  const uint64_t start = c.process.start_mono_ns;
  const auto& precise = c.gpu.precise;
  const auto& devices = c.gpu.devices;
  auto o = w.object();
  w.key("sampling");
  write_sampling(w);
  w.key("precise");
  write_precise(w, precise, start, c.environment.cuda_injection64_path);
  w.key("clock");
  write_clock(w, c);
  w.key("devices");
  {
    auto a = w.array();
    for (const auto& d : devices) write_device(w, d, start);
  }
  w.key("findings");
  {
    auto a = w.array();
    for (const auto& d : devices)
      for (const Finding& f : d.findings) {
        auto fo = w.object();
        w.member("id", f.info().name);
        w.member("severity", severity_name(f.severity()));
        w.member("device", d.device);
        w.member("title", f.info().title);
        w.member("message", f.message);
        w.member("fix", f.fix());
        w.member("diagnosis", f.id == FindingId::gpu_idle ? d.diagnosis : "");
      }
  }
  w.key("events");
  {
    auto a = w.array();
    for (const auto& e : recorder::gpu_events()) {
      auto eo = w.object();
      w.member("t_ns", e.t_ns > start ? e.t_ns - start : 0);
      w.member("device", e.device);
      w.member("kind", (e.type & 0x8) ? "xid" : "double_bit_ecc");  // nvmlEventTypeXidCriticalError = 0x8
      w.member("data", e.data);
    }
  }
}

}  // namespace cudashim::report
