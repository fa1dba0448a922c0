// policy/rules/toolchain.cpp: see toolchain.h.
#include "policy/rules/toolchain.h"

#include <string>

namespace cudashim::policy {
using symbols::PtxasTarget;
using symbols::SmSupport;
using symbols::ToolVersion;
using symbols::TritonInput;
using symbols::TritonTool;
namespace {

std::string version_text(const std::optional<ToolVersion>& v) {
  return v ? "CUDA " + std::to_string(v->major) + "." + std::to_string(v->minor) + " (V" + v->full + ")" : "version unknown";
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

Finding make(FindingId id, std::string subject, std::string message) {
  return Finding{id, std::move(subject), std::move(message), {}};
}

// Variables that name an unusable tool: Triton skips them without a word.
void tool_variables(const TritonInput& in, std::vector<Finding>& out) {
  for (const auto& t : in.tools) {
    if (t.override_path.empty() || t.override_problem.empty()) continue;
    Finding f = make(FindingId::triton_env_path_bad, t.env_var,
                     t.env_var + "=" + t.override_path + " is " + t.override_problem + ": Triton silently uses " +
                         (t.bundled.empty() ? std::string("no ") + t.name + " at all" : "its bundled " + t.bundled) + " instead");
    if (!t.bundled.empty()) f.evidence.push_back("bundled " + t.name + ": " + t.bundled + ", " + version_text(t.bundled_version));
    out.push_back(std::move(f));
  }
}

// The ptxas Triton runs: missing, or of a release that does not target the GPU.
void ptxas_rules(const TritonInput& in, const TritonReport& rep, std::vector<Finding>& out) {
  const TritonTool* tool = rep.ptxas;
  const std::string& var = rep.ptxas_var;
  if (rep.ptxas_path.empty()) {
    Finding f = make(FindingId::triton_ptxas_missing, in.package_dir,
                     "Triton has no ptxas: every kernel compilation fails with \"Cannot find ptxas\"");
    f.evidence.push_back("no " + join(in.package_dir, "backends/nvidia/bin/" + (tool ? tool->name : std::string("ptxas"))));
    f.evidence.push_back(var + (tool && !tool->override_path.empty() ? "=" + tool->override_path + " (" + tool->override_problem + ")"
                                                                     : " is not set"));
    out.push_back(std::move(f));
    return;
  }
  if (!rep.ptxas_version || in.sm <= 0) return;
  const std::string sm = "sm_" + std::to_string(in.sm);
  const PtxasTarget target = symbols::ptxas_target(rep.ptxas_version->major, rep.ptxas_version->minor, in.sm, in.sm >= 90);
  if (target.support != SmSupport::too_old && target.support != SmSupport::dropped) return;
  const std::string need = target.support == SmSupport::too_old ? sm + " needs ptxas from CUDA " + target.first + " or newer"
                                                                : "CUDA " + target.last + " was the last release to target " + sm;
  Finding f = make(FindingId::triton_ptxas_unsupported_sm, rep.ptxas_path,
                   "Triton's ptxas " + rep.ptxas_path + " is " + version_text(rep.ptxas_version) + ": " + need + "; set " + var +
                       " to a ptxas that targets " + sm);
  f.evidence.push_back(rep.ptxas_version->text);
  f.evidence.push_back(rep.ptxas_path == tool->bundled
                           ? "bundled with Triton " + (in.version.empty() ? "" : in.version + " ") + "at " + in.package_dir
                           : "named by " + var);
  out.push_back(std::move(f));
}

// libcuda as Triton looks for it and links its launcher against it. Its failure is only
// Triton's when an ordinary process here finds the driver.
void libcuda_rules(const TritonInput& in, const TritonReport& rep, std::vector<Finding>& out) {
  if (!rep.libcuda_env_problem.empty())
    out.push_back(make(FindingId::triton_env_path_bad, "TRITON_LIBCUDA_PATH",
                       "TRITON_LIBCUDA_PATH=" + *in.libcuda_path_env + rep.libcuda_env_problem));
  if (rep.libcuda_failure.empty() || !in.driver_found) return;
  Finding f = make(FindingId::triton_libcuda_not_found, in.package_dir, rep.libcuda_failure);
  f.evidence = rep.libcuda_tried;
  f.evidence.push_back("an ordinary process here does find libcuda.so.1 (the loader's search), so only Triton fails");
  out.push_back(std::move(f));
}

// The summary: what Triton will use.
Finding summary(const TritonInput& in, const TritonReport& rep) {
  const std::string sm = "sm_" + std::to_string(in.sm);
  Finding s = make(FindingId::triton_toolchain, in.package_dir,
                   "Triton" + (in.version.empty() ? std::string() : " " + in.version) + " at " + in.package_dir);
  const std::string source = rep.ptxas_path.empty()                                                       ? std::string("missing")
                             : rep.ptxas != nullptr && rep.ptxas_path == rep.ptxas->override_path ? rep.ptxas_var
                                                                                                          : std::string("bundled");
  s.evidence.push_back("ptxas for " + sm + ": " +
                       (rep.ptxas_path.empty() ? std::string("none") : rep.ptxas_path + ", " + version_text(rep.ptxas_version)) +
                       " [" + source + "]");
  std::string dirs;
  for (const auto& d : rep.libcuda_dirs) dirs += (dirs.empty() ? "" : ", ") + d;
  s.evidence.push_back("libcuda folders: " + (dirs.empty() ? std::string("none") : dirs) + " [" + rep.libcuda_how + "]");
  if (in.links_libcuda_soname.has_value())
    s.evidence.push_back(std::string("launcher links ") + (*in.links_libcuda_soname ? "-l:libcuda.so.1" : "-lcuda (needs libcuda.so)"));
  return s;
}

}  // namespace

TritonReport triton_findings(const TritonInput& in) {
  TritonReport rep;
  static_cast<symbols::TritonToolchain&>(rep) = symbols::triton_toolchain(in);
  tool_variables(in, rep.findings);
  ptxas_rules(in, rep, rep.findings);
  libcuda_rules(in, rep, rep.findings);
  rep.findings.push_back(summary(in, rep));
  return rep;
}

}  // namespace cudashim::policy
