// sections.h: one function per top-level member of the report, each in a file of its
// name (report/sections/<name>.cpp). Each writes its member's value; report.cpp writes
// the keys, in order.
#pragma once
#include <cstdint>
#include <vector>

#include "policy/framework_env.h"
#include "policy/library_inventory.h"
#include "policy/rules/gpu_time.h"
#include "policy/rules/managed_paging.h"
#include "policy/settings_load.h"
#include "policy/sync_rules.h"
#include "recorder/json_writer.h"
#include "recorder/recorder.h"
#include "report/report.h"

namespace cudashim::report {

// What every section may read, taken once per report.
struct ReportContext {
  const recorder::ProcessInfo& process;
  const policy::Policy* policy;                  // null: no "policy" section
  const std::vector<policy::AppliedEnv>* applied;
  const recorder::CounterTotals& totals;         // every thread slot, summed
  const policy::LibraryInventory& libraries;     // the library watch's last re-read
  const std::vector<Finding>& findings;  // the runtime rules, evaluated once for this report
  const policy::GpuTimeResult& gpu;      // the GPU time and its diagnosis (policy/rules/gpu_time.h), decided once
  const std::vector<policy::ManagedPaging>& managed;  // managed memory over the bus and its findings, decided once
  const ReportEnvironment& environment;         // variables and the driver's version file, read by the caller
  uint64_t end_unix_ns;                          // CLOCK_REALTIME now
  uint64_t wall_ns;                              // monotonic time since start-up
};

void write_process(JsonWriter& w, const ReportContext& c);
void write_self_cost(JsonWriter& w, const ReportContext& c);
void write_api(JsonWriter& w, const ReportContext& c);
void write_driver(JsonWriter& w, const ReportContext& c);
void write_devices(JsonWriter& w, const ReportContext& c);
void write_frameworks(JsonWriter& w, const ReportContext& c);
void write_blocking(JsonWriter& w, const ReportContext& c);
void write_memory(JsonWriter& w, const ReportContext& c);
void write_oom(JsonWriter& w, const ReportContext& c);
void write_policy(JsonWriter& w, const ReportContext& c);
void write_findings(JsonWriter& w, const ReportContext& c);
void write_leaks(JsonWriter& w, const ReportContext& c);
void write_pool(JsonWriter& w, const ReportContext& c);
void write_oom_context(JsonWriter& w, const ReportContext& c);
void write_torch_memory(JsonWriter& w, const ReportContext& c);
void write_libraries(JsonWriter& w, const ReportContext& c);
void write_library_findings(JsonWriter& w, const ReportContext& c);
void write_modules(JsonWriter& w, const ReportContext& c);
void write_interposition(JsonWriter& w, const ReportContext& c);
void write_gpu_time(JsonWriter& w, const ReportContext& c);
void write_managed_memory(JsonWriter& w, const ReportContext& c);

}  // namespace cudashim::report
