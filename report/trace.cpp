// trace.cpp: the trace's events, gathered from the recorder and the policy, in order:
// the process, each thread's calls, device memory, findings, library loads.
#include "report/trace.h"

#include "policy/library_inventory.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/json_writer.h"
#include "recorder/thread_slots.h"
#include "report/trace_events.h"

namespace cudashim::report {

std::string render_trace(int pid, uint64_t start_ticks, uint64_t start_mono_ns) {
  auto us = [&](uint64_t ticks) { return ticks_to_ns(ticks > start_ticks ? ticks - start_ticks : 0) / 1000.0; };
  std::string out;
  JsonWriter w(out);
  {
    auto top = w.object();
    w.member("displayTimeUnit", "ms");
    w.key("otherData");
    {
      auto o = w.object();
      w.member("producer", "cudashim");
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
      events.add(TraceDeviceMemory{m.device, m.t_ns / 1000.0, m.live_bytes});
    // Findings: an instant event when their first site was first hit.
    recorder::for_each_site([&](const recorder::CallSite& s) {
      if (!policy::in_steady_loop(s)) return;  // the report's rule: a burst is no finding
      const FindingId f = policy::classify_site(s);
      if (f == FindingId::none) return;
      events.add(TraceFinding{finding_info(f).name, us(s.first_hit_ticks.load(std::memory_order_relaxed)),
                              policy::describe_site(s), finding_info(f).fix});
    });
    // Library loads and unloads, as the watcher saw them (within a second of the dlopen).
    for (const auto& e : policy::library_events())
      events.add(TraceLibrary{e.load, e.family, (e.t_ns > start_mono_ns ? e.t_ns - start_mono_ns : 0) / 1000.0, e.path,
                              e.version});
  }
  out += '\n';
  return out;
}

}  // namespace cudashim::report
