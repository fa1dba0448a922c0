// summary.h: the findings as the shim logs them at exit, for a person at a terminal.
#pragma once
#include <cstdint>
#include <string>

namespace cudashim::report {

// One line per finding (policy/sync_rules.h), sorted by blocked time, given the process's
// wall time; "" when there is none.
std::string findings_summary_text(uint64_t wall_ns);

}  // namespace cudashim::report
