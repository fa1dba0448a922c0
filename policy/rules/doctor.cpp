// policy/rules/doctor.cpp: see doctor.h.
#include "policy/rules/doctor.h"

#include <fmt/format.h>

#include <cstdio>

#include "catalog/cuda_drivers.h"

namespace cudashim::policy {

namespace {

// "12.8" -> {12, 8}; "12" -> {12, -1}; {0, -1} for anything else.
std::pair<int, int> cuda_release(const std::string& v) {
  int major = 0, minor = -1, used = 0;
  if (std::sscanf(v.c_str(), "%d.%d%n", &major, &minor, &used) == 2) return {major, minor};
  if (std::sscanf(v.c_str(), "%d%n", &major, &used) == 1 && used == static_cast<int>(v.size())) return {major, -1};
  return {0, -1};
}

}  // namespace

const char* verdict_name(DriverVerdict v) {
  switch (v) {
    case DriverVerdict::ok: return "ok";
    case DriverVerdict::minor_compat: return "minor-compat";
    case DriverVerdict::too_old: return "too-old";
    case DriverVerdict::no_driver: return "no-driver";
    case DriverVerdict::unknown_cuda: return "unknown-cuda";
    case DriverVerdict::nothing: return "nothing";
  }
  return "?";
}

int compare_driver(const std::string& a, const std::string& b) {
  int x[3] = {0, 0, 0}, y[3] = {0, 0, 0};
  std::sscanf(a.c_str(), "%d.%d.%d", &x[0], &x[1], &x[2]);
  std::sscanf(b.c_str(), "%d.%d.%d", &y[0], &y[1], &y[2]);
  for (int i = 0; i < 3; ++i)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

Headline make_headline(std::vector<symbols::FrameworkInfo> frameworks, const std::vector<ScannedRuntime>& runtimes,
                       const std::string& driver, const std::string& driver_source) {
  Headline h;
  h.frameworks = std::move(frameworks);
  h.driver = driver;
  h.driver_source = driver.empty() ? "" : driver_source;
  for (const auto& f : h.frameworks) {
    if (f.cuda.empty()) continue;
    h.subject = f.name + " " + f.version;
    h.cuda = f.cuda;
    h.cuda_source = f.cuda_source;
    break;
  }
  if (h.subject.empty()) {
    const ScannedRuntime* newest = nullptr;
    for (const auto& r : runtimes) {
      if (cuda_release(r.version).first <= 0) continue;
      if (newest == nullptr || compare_driver(newest->version, r.version) < 0) newest = &r;
    }
    if (newest != nullptr) {
      const auto [major, minor] = cuda_release(newest->version);
      h.subject = "the CUDA runtime " + newest->path;
      h.cuda = minor >= 0 ? fmt::format("{}.{}", major, minor) : std::to_string(major);
      h.cuda_source = "its version " + newest->version;
    } else if (!h.frameworks.empty()) {
      h.subject = h.frameworks.front().name + " " + h.frameworks.front().version;  // a CPU build
    }
  }
  if (h.subject.empty()) return h;  // verdict: nothing
  const auto [major, minor] = cuda_release(h.cuda);
  const char* needed = major > 0 ? cuda_minor_compat_driver(major) : nullptr;
  const char* full = major > 0 && minor >= 0 ? cuda_toolkit_driver(major, minor) : nullptr;
  h.driver_needed = needed != nullptr ? needed : "";
  h.driver_full = full != nullptr ? full : "";
  if (needed == nullptr)
    h.verdict = DriverVerdict::unknown_cuda;
  else if (driver.empty())
    h.verdict = DriverVerdict::no_driver;
  else if (compare_driver(driver, needed) < 0)
    h.verdict = DriverVerdict::too_old;
  else if (full != nullptr && compare_driver(driver, full) < 0)
    h.verdict = DriverVerdict::minor_compat;
  else
    h.verdict = DriverVerdict::ok;
  return h;
}

std::vector<Finding> headline_findings(const Headline& h) {
  std::vector<Finding> out;
  if (h.verdict != DriverVerdict::too_old && h.verdict != DriverVerdict::minor_compat) return out;
  const bool too_old = h.verdict == DriverVerdict::too_old;
  Finding f{too_old ? FindingId::doctor_driver_too_old : FindingId::doctor_driver_minor_compat, h.subject,
            too_old ? fmt::format("{} is built for CUDA {}: it needs driver >= {}; driver {} is older", h.subject, h.cuda,
                                  h.driver_needed, h.driver)
                    : fmt::format("{} is built for CUDA {}: driver {} runs it under minor-version compatibility (every CUDA {} "
                                  "feature needs >= {})",
                                  h.subject, h.cuda, h.driver, h.cuda, h.driver_full),
            {}};
  f.evidence.push_back(fmt::format("CUDA {} ({})", h.cuda, h.cuda_source));
  f.evidence.push_back(fmt::format("driver {} ({})", h.driver, h.driver_source));
  f.evidence.push_back(fmt::format("CUDA {}.x runs on drivers >= {} (minor-version compatibility){}", h.cuda.substr(0, h.cuda.find('.')),
                                   h.driver_needed,
                                   h.driver_full.empty() ? "" : fmt::format("; CUDA {} ships with {}", h.cuda, h.driver_full)));
  out.push_back(std::move(f));
  return out;
}

Finding unreadable_file(std::string subject, std::string reason) {
  return Finding{FindingId::unreadable_file, std::move(subject), std::move(reason), {}};
}

Finding sm_assumed(int sm) {
  return Finding{FindingId::sm_assumed, "sm_" + std::to_string(sm),
                 "no nvidia-smi answered: coverage is checked for sm_" + std::to_string(sm), {}};
}

}  // namespace cudashim::policy
