// trace.cpp: the trace's events, gathered from the recorder and the policy, in order:
// the process, each thread's calls, device memory, findings, library loads.
#include "report/trace.h"

#include "policy/library_inventory.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/gpu_samples.h"
#include "recorder/json_writer.h"
#include "recorder/thread_slots.h"
#include "report/trace_events.h"
#include "symbols/nvml_api.h"

#include <ctime>

namespace cudashim::report {

namespace {

// CLOCK_REALTIME minus CLOCK_MONOTONIC now, in ns (docs/gpu-time.md, "One clock").
uint64_t realtime_offset_ns() {
  timespec r;
  clock_gettime(CLOCK_REALTIME, &r);
  const uint64_t mono = monotonic_ns();
  const uint64_t real = static_cast<uint64_t>(r.tv_sec) * 1000000000ull + static_cast<uint64_t>(r.tv_nsec);
  return real > mono ? real - mono : 0;
}

}  // namespace

std::string render_trace(int pid, uint64_t start_ticks, uint64_t start_mono_ns) {
  // Every timestamp is microseconds of CLOCK_REALTIME: the monotonic readings shifted by one
  // offset, so that traces of several processes and hosts (NTP-synchronized) line up in one view.
  const double epoch_us = static_cast<double>(realtime_offset_ns() + start_mono_ns) / 1000.0;
  auto us = [&](uint64_t ticks) {
    return epoch_us + ticks_to_ns(ticks > start_ticks ? ticks - start_ticks : 0) / 1000.0;
  };
  auto mono_us = [&](uint64_t t_ns) { return epoch_us + (t_ns > start_mono_ns ? t_ns - start_mono_ns : 0) / 1000.0; };
  std::string out;
  JsonWriter w(out);
  {
    auto top = w.object();
    w.member("displayTimeUnit", "ms");
    w.key("otherData");
    {
      auto o = w.object();
      w.member("producer", "cudashim");
      w.member("ts_base", "CLOCK_REALTIME us");
    }
    w.key("traceEvents");
    auto list = w.array(json_lines(0));
    TraceEvents events(w, pid);
    events.process_name();
    recorder::ThreadSlot* slots = recorder::slot_table();
    const uint32_t used = recorder::slots_in_use();
    for (uint32_t t = 0; t < used; ++t) {
      const recorder::ThreadSlot& sl = slots[t];
      const uint64_t total = sl.trace_next.load(std::memory_order_acquire);
      const uint32_t tid = sl.tid.load(std::memory_order_relaxed);
      if (total == 0) continue;
      events.add(TraceThreadName{tid});
      for (uint64_t i = total > recorder::kTraceSize ? total - recorder::kTraceSize : 0; i < total; ++i) {
        const recorder::TraceEvent& e = sl.trace[i % recorder::kTraceSize];
        const auto* site = static_cast<const recorder::CallSite*>(e.site);
        const HookInfo& h = hook_info(static_cast<HookId>(e.hook));
        const std::string where = site ? policy::describe_site(*site) : "";
        events.add(TraceCall{tid, h.name, family_name(h.family), us(e.start), ticks_to_ns(e.duration) / 1000.0,
                             site ? &where : nullptr});
      }
    }
    for (const auto& m : recorder::stream_memory_samples())
      events.add(TraceDeviceMemory{m.device, epoch_us + m.t_ns / 1000.0, m.live_bytes});
    // GPU counters from NVML (recorder/gpu_samples.h): utilization, then the health tracks.
    for (const auto& u : recorder::gpu_util_samples())
      events.add(TraceGpuCounter{u.device, u.process ? "process busy %" : "busy %", mono_us(u.t_ns), {"busy", nullptr},
                                 {static_cast<double>(u.pct), 0}});
    for (const auto& h : recorder::gpu_health_samples()) {
      const double ts = mono_us(h.t_ns);
      if (h.have & recorder::GpuHealthSample::kClocks)
        events.add(TraceGpuCounter{h.device, "clocks MHz", ts, {"sm", "mem"},
                                   {static_cast<double>(h.sm_mhz), static_cast<double>(h.mem_mhz)}});
      if (h.have & recorder::GpuHealthSample::kPower)
        events.add(TraceGpuCounter{h.device, "power W", ts, {"power", "limit"},
                                   {h.power_mw / 1000.0, h.power_limit_mw / 1000.0}});
      if (h.have & recorder::GpuHealthSample::kTemp)
        events.add(TraceGpuCounter{h.device, "temperature C", ts, {"temp", nullptr}, {static_cast<double>(h.temp_c), 0}});
      if (h.have & recorder::GpuHealthSample::kReasons)
        events.add(TraceGpuCounter{h.device, "throttled", ts, {"slowdown", nullptr},
                                   {(h.clock_event_reasons & symbols::kClockEventsSlowdown) ? 1.0 : 0.0, 0}});
    }
    for (const auto& e : recorder::gpu_events())
      events.add(TraceGpuEvent{e.device, (e.type & symbols::kNvmlEventXidCritical) ? "xid" : "double_bit_ecc", e.data,
                               mono_us(e.t_ns)});
    // Findings: an instant event when their first site was first hit.
    const uint64_t window = policy::loop_window_ticks();
    recorder::for_each_site([&](const recorder::CallSite& s) {
      if (!policy::in_steady_loop(s, window)) return;  // the report's rule: a burst is no finding
      const FindingId f = policy::classify_site(s);
      if (f == FindingId::none) return;
      events.add(TraceFinding{finding_info(f).name, us(s.first_hit_ticks.load(std::memory_order_relaxed)),
                              policy::describe_site(s), finding_info(f).fix});
    });
    // Library loads and unloads, as the watcher saw them (within a second of the dlopen).
    for (const auto& e : policy::library_events())
      events.add(TraceLibrary{e.load, e.family, mono_us(e.t_ns), e.path, e.version});
  }
  out += '\n';
  return out;
}

}  // namespace cudashim::report
