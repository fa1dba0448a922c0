// trace_report.cpp: rendering the trace.
#include "policy/trace_report.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include "policy/library_watch.h"
#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/clock.h"
#include "recorder/event_stream.h"
#include "recorder/thread_slots.h"

namespace cudashim::policy {
std::string trace_json(int pid, uint64_t start_ticks, uint64_t start_mono_ns) {
  std::string out = "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"producer\": \"cudashim\"}, \"traceEvents\": [\n";
  out += fmt::format("{{\"ph\": \"M\", \"pid\": {}, \"name\": \"process_name\", \"args\": {{\"name\": \"cudashim pid {}\"}}}}",
                     pid, pid);
  auto us = [&](uint64_t ticks) { return ticks_to_ns(ticks > start_ticks ? ticks - start_ticks : 0) / 1000.0; };
  recorder::ThreadSlot* slots = recorder::slot_table();
  const uint32_t used = recorder::slots_in_use();
  for (uint32_t t = 0; t < used; ++t) {
    const recorder::ThreadSlot& sl = slots[t];
    const uint64_t total = sl.trace_next.load(std::memory_order_acquire);
    const uint32_t tid = sl.tid.load(std::memory_order_relaxed);
    if (total == 0) continue;
    out += fmt::format(",\n{{\"ph\": \"M\", \"pid\": {}, \"tid\": {}, \"name\": \"thread_name\", \"args\": {{\"name\": \"thread {}\"}}}}",
                       pid, tid, tid);
    for (uint64_t i = total > recorder::kTraceSize ? total - recorder::kTraceSize : 0; i < total; ++i) {
      const recorder::TraceEvent& e = sl.trace[i % recorder::kTraceSize];
      const auto* site = static_cast<const recorder::CallSite*>(e.site);
      const HookInfo& h = hook_info(static_cast<HookId>(e.hook));
      out += fmt::format(",\n{{\"ph\": \"X\", \"pid\": {}, \"tid\": {}, \"name\": \"{}\", \"cat\": \"{}\", \"ts\": {:.3f}, "
                         "\"dur\": {:.3f}, \"args\": {{\"where\": {}}}}}",
                         pid, tid, h.name, family_name(h.family), us(e.start), ticks_to_ns(e.duration) / 1000.0,
                         site ? json_str(describe_site(*site)) : "null");
    }
  }
  for (const auto& m : recorder::stream_memory_samples())
    out += fmt::format(",\n{{\"ph\": \"C\", \"pid\": {}, \"name\": \"device {} memory\", \"ts\": {:.3f}, \"args\": {{\"live_bytes\": {}}}}}",
                       pid, m.device, m.t_ns / 1000.0, m.live_bytes);
  // Findings: an instant event when their first site was first hit.
  recorder::for_each_site([&](const recorder::CallSite& s) {
    if (s.hits.load(std::memory_order_relaxed) <= sync_thresholds().warmup_hits) return;
    const FindingId f = classify_site(s);
    if (f == FindingId::none) return;
    out += fmt::format(",\n{{\"ph\": \"i\", \"s\": \"p\", \"pid\": {}, \"tid\": 0, \"name\": \"{}\", \"ts\": {:.3f}, "
                       "\"args\": {{\"where\": {}, \"fix\": {}}}}}",
                       pid, finding_info(f).name, us(s.first_hit_ticks.load(std::memory_order_relaxed)),
                       json_str(describe_site(s)), json_str(finding_info(f).fix));
  });
  // Library loads and unloads, as the watcher saw them (within a second of the dlopen).
  for (const auto& e : library_events())
    out += fmt::format(",\n{{\"ph\": \"i\", \"s\": \"p\", \"pid\": {}, \"tid\": 0, \"name\": \"{} {}\", \"cat\": \"library\", "
                       "\"ts\": {:.3f}, \"args\": {{\"path\": {}, \"version\": {}}}}}",
                       pid, e.load ? "load" : "unload", e.family,
                       (e.t_ns > start_mono_ns ? e.t_ns - start_mono_ns : 0) / 1000.0, json_str(e.path), json_str(e.version));
  out += "\n]}\n";
  return out;
}

}  // namespace cudashim::policy
