// summary.h: the findings as the shim logs them at exit, for a person at a terminal.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "policy/sync_rules.h"

namespace cudashim::report {

// One line per finding of `findings` (policy::evaluate_findings, sorted by blocked time), given
// the process's wall time: its costliest site with that site's own count, and its cost per steady-state
// step. A framework's own findings (nothing to do) are left out. "" when there is none.
// `any_warning`, when given, is set when a line is a warning or an error.
std::string findings_summary_text(const std::vector<Finding>& findings, uint64_t wall_ns,
                                  bool* any_warning = nullptr);

// One line: what cudashim itself cost the process so far (recorder/own_cost.h; the report's
// "self_cost"), "cudashim used 0.21% of the run (...)", ending in a newline.
std::string self_cost_text(uint64_t wall_ns);

}  // namespace cudashim::report
