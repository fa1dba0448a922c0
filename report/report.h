// report.h: the per-process report, schema "cudashim.report/1" (docs/report-schema.md).
#pragma once
#include <string>
#include <vector>

#include "policy/framework_env.h"
#include "policy/settings_load.h"
#include "recorder/recorder.h"

namespace cudashim::report {

struct ReportInputs {
  const recorder::ProcessInfo& process;
  const policy::Policy* policy = nullptr;                 // null: no "policy" section
  const std::vector<policy::AppliedEnv>* applied = nullptr;  // what the policy set at start-up
};

// Returns the report as JSON text: its sections in the order of kSections (report.cpp),
// each rendered by its own file in report/sections/. Cold: reads every table, symbolizes
// call sites, allocates.
std::string render_report(const ReportInputs& in);

}  // namespace cudashim::report
