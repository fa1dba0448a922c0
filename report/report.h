// report.h: the per-process report, schema "cudashim.report/1" (docs/report-schema.md).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "policy/rules/gpu_time.h"
#include "policy/framework_env.h"
#include "policy/settings_load.h"
#include "policy/sync_rules.h"
#include "recorder/recorder.h"
#include "symbols/driver_bridge.h"

namespace cudashim::report {

// What the report says of the process's surroundings, read by the caller when it renders (the
// report layer reads neither the environment nor files under /proc).
struct ReportEnvironment {
  std::string cuda_module_loading;    // CUDA_MODULE_LOADING, "" when unset
  std::string cuda_injection64_path;  // CUDA_INJECTION64_PATH: another profiler's injection library
  std::optional<symbols::KernelModule> kernel_module;  // CUDASHIM_DRIVER_VERSION_FILE's release, when readable
};

struct ReportInputs {
  const recorder::ProcessInfo& process;
  const policy::Policy* policy = nullptr;                 // null: no "policy" section
  const std::vector<policy::AppliedEnv>* applied = nullptr;  // what the policy set at start-up
  // The runtime findings, when the caller evaluated them already (the exit path: one evaluation
  // for the summary and the report); nullptr: render_report evaluates them once itself.
  const std::vector<Finding>* findings = nullptr;
  ReportEnvironment environment{};
  // The GPU time and its diagnosis, when the caller decided them already (the exit path: the
  // summary and the report show the same); nullptr: render_report decides them once itself.
  const policy::GpuTimeResult* gpu_time = nullptr;
};

// Returns the report as JSON text: its sections in the order of kSections (report.cpp),
// each rendered by its own file in report/sections/. Cold: reads every table, symbolizes
// call sites, allocates.
std::string render_report(const ReportInputs& in);

}  // namespace cudashim::report
