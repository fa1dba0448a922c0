// policy/rules/library_search.cpp: see library_search.h.
#include "policy/rules/library_search.h"

#include <filesystem>

#include "policy/rules/libraries.h"
#include "symbols/path_names.h"
#include "symbols/resolution_text.h"

namespace cudashim::policy {
namespace fs = std::filesystem;
namespace {

constexpr std::size_t kMaxEvidence = 12;  // lines of one list in one finding

}  // namespace

Finding library_not_found(const std::string& name, const std::vector<std::string>& needers, const symbols::Resolution& search,
                          const std::vector<symbols::FrameworkInfo>& frameworks) {
  Finding f{FindingId::library_not_found, needers.front(),
            symbols::base_name(needers.front()) + ": " + name + ": cannot open shared object file" +
                (needers.size() > 1 ? " (and " + std::to_string(needers.size() - 1) + " more files need it)" : ""),
            {}};
  for (std::size_t i = 0; i < needers.size() && i < kMaxEvidence; ++i) f.evidence.push_back("needed by " + needers[i]);
  if (needers.size() > kMaxEvidence) f.evidence.push_back("... and " + std::to_string(needers.size() - kMaxEvidence) + " more");
  symbols::add_resolution_evidence(search, f.evidence);
  const symbols::FrameworkInfo* owner = nullptr;
  for (const auto& fw : frameworks)
    if (symbols::pinned_requirement(fw, name) &&
        (owner == nullptr || needers.front().rfind(fs::absolute(fw.site_packages).lexically_normal().string(), 0) == 0))
      owner = &fw;
  if (owner != nullptr) {
    const std::string req = *symbols::pinned_requirement(*owner, name);
    f.exact_fix = "pip install \"" + req + "\" (" + owner->name + " " + owner->version + " requires it: Requires-Dist in its METADATA)";
    f.evidence.push_back(owner->name + " " + owner->version + " pins " + req);
  }
  return f;
}

std::optional<Finding> stub_needed(const std::string& path, const symbols::Resolution& needed) {
  if (!needed.found() || !is_stub_libcuda(needed.path)) return std::nullopt;
  Finding f{FindingId::stub_libcuda, path, symbols::base_name(path) + " would load the stub " + needed.path, {}};
  symbols::add_resolution_evidence(needed, f.evidence);
  return f;
}

void add_driver_search_findings(const symbols::Resolution& driver, const symbols::Resolution& unversioned, std::vector<Finding>& out) {
  for (const auto* r : {&driver, &unversioned}) {
    if (!r->found() || !is_stub_libcuda(r->path)) continue;
    Finding f{FindingId::stub_libcuda, r->name, "a process here would load the stub " + r->path + " as " + r->name, {}};
    symbols::add_resolution_evidence(*r, f.evidence);
    out.push_back(std::move(f));
  }
  if (!driver.found()) {
    Finding f{FindingId::driver_not_found, "libcuda.so.1", "libcuda.so.1 is not on the loader's search path", {}};
    symbols::add_resolution_evidence(driver, f.evidence);
    out.push_back(std::move(f));
  }
}

}  // namespace cudashim::policy
