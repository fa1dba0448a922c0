// summary.cpp: the exit summary of the findings.
#include "report/summary.h"

#include <fmt/format.h>

#include "policy/sync_rules.h"

namespace cudashim::report {

std::string findings_summary_text(uint64_t wall_ns) {
  std::string out;
  for (const policy::FindingResult& f : policy::evaluate_findings()) {
    const FindingInfo& row = finding_info(f.finding);
    out += fmt::format("  {:<26} {:>8} calls  {:>10.1f} ms blocked ({:>5.1f}% of wall)  {}\n", row.name, f.count,
                       f.blocked_ns / 1e6, wall_ns ? 100.0 * f.blocked_ns / wall_ns : 0.0,
                       f.sites.empty() ? std::string("(process-wide)") : policy::describe_site(*f.sites[0].site));
  }
  return out;
}

}  // namespace cudashim::report
