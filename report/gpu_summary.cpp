// gpu_summary.cpp: see gpu_summary.h.
#include "report/gpu_summary.h"

#include <fmt/format.h>

#include <algorithm>

namespace cudashim::report {

std::string gpu_idle_summary_text(const std::vector<policy::GpuDeviceTime>& devices) {
  std::string out;
  for (const auto& d : devices) {
    const bool fired = std::any_of(d.findings.begin(), d.findings.end(),
                                   [](const Finding& f) { return f.id == FindingId::gpu_idle; });
    if (!fired) continue;
    out += fmt::format("  GPU {}: {} ({})\n", d.device, d.summary, d.diagnosis);
    out += fmt::format("    the steady state [{}] #: busy  s: idle after syncs  h: host between launches  ?: unexplained\n",
                       policy::idle_split_bar(d.split));
  }
  return out;
}

}  // namespace cudashim::report
