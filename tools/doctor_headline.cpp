// doctor_headline.cpp: the headline's text (the verdict is policy/rules/doctor.cpp's).
#include "tools/doctor_headline.h"

#include <fmt/format.h>

namespace cudashim::tools {

std::string headline_text(const Headline& h) {
  std::string out;
  if (h.subject.empty()) return "no framework (torch, JAX, CuPy) and no CUDA runtime found\n";
  if (h.cuda.empty()) {
    out = fmt::format("{}: a build without CUDA: no driver needed\n", h.subject);
  } else {
    out = fmt::format("{}, built for CUDA {} ({})\n", h.subject, h.cuda, h.cuda_source);
    if (h.driver_needed.empty())
      out += fmt::format("  needs a driver for CUDA {}: not in cudashim's table (catalog/cuda_drivers.def)\n", h.cuda);
    else if (h.driver_full.empty())
      out += fmt::format("  needs driver >= {}\n", h.driver_needed);
    else
      out += fmt::format("  needs driver >= {} (>= {} for every CUDA {} feature)\n", h.driver_needed, h.driver_full, h.cuda);
    static constexpr const char* kVerdicts[] = {"OK", "OK under minor-version compatibility", "TOO OLD", "", "unknown", ""};
    if (h.driver.empty())
      out += "  driver: none found (no /proc/driver/nvidia/version; pass --driver-version to check one)\n";
    else
      out += fmt::format("  driver: {} ({}): {}\n", h.driver, h.driver_source, kVerdicts[static_cast<int>(h.verdict)]);
  }
  for (const auto& f : h.frameworks)
    if (f.name + " " + f.version != h.subject)
      out += fmt::format("  also: {} {}{}\n", f.name, f.version, f.cuda.empty() ? "" : " (CUDA " + f.cuda + ")");
  return out;
}

}  // namespace cudashim::tools
