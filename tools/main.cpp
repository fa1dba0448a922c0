// main.cpp: the `cudashim` command line.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <fstream>
#include <iostream>

#include "catalog/findings.h"
#include "policy/printable.h"
#include "policy/settings_load.h"
#include "catalog/hooks.h"
#include "tools/doctor.h"
#include "tools/html_report.h"
#include "tools/json_output.h"
#include "tools/rank_compare.h"
#include "tools/report_reader.h"
#include "tools/run_command.h"

namespace {

// `cudashim report PATH...`. Exit status: 0 when every input was read; 3 when some could
// not be (each named on stderr in one line) and the rest is summarized; 1 when no report
// was found or none could be read; 2 when the HTML page cannot be written.
int cmd_report(const std::vector<std::string>& paths, bool json, const std::string& html) {
  std::vector<std::string> problems;
  const auto reports = cudashim::tools::load_reports(paths, problems);
  const std::string page = html.empty() ? "" : cudashim::tools::render_html(reports, problems);
  for (const auto& p : problems) fmt::print(stderr, "warning: {}\n", p);
  if (!html.empty()) {
    std::ofstream f(html);
    f << page;
    if (!f) {
      fmt::print(stderr, "cudashim report: cannot write {}: check the folder exists and is writable\n", html);
      return 2;
    }
    fmt::print(stderr, "wrote {} ({} reports)\n", html, reports.size());
  }
  const auto ranks = cudashim::tools::compare_ranks(reports);
  if (json) {
    auto merged = cudashim::tools::merge_reports(reports);
    if (!ranks.json.is_null()) merged["rank_comparison"] = ranks.json;
    std::cout << cudashim::tools::dump_utf8(merged, 2) << "\n";
  } else {
    const bool color = isatty(1) && std::getenv("NO_COLOR") == nullptr;
    std::cout << cudashim::tools::render_summary(reports, color) << ranks.text;
    if (reports.empty()) std::cout << "no cudashim reports found in the given paths\n";
  }
  if (reports.empty()) return 1;
  return problems.empty() ? 0 : 3;
}

int cmd_hooks(bool names_only, bool markdown) {
  using namespace cudashim;
  if (markdown) std::cout << "| ABI symbol | Layer | Family | Recorded | Timing |\n|---|---|---|---|---|\n";
  auto row = [&](const char* name, const char* layer, const char* family, const char* rec, const char* tim) {
    if (names_only)
      std::cout << name << "\n";
    else if (markdown)
      std::cout << fmt::format("| `{}` | {} | {} | {} | {} |\n", name, layer, family, rec, tim);
    else
      std::cout << fmt::format("{:<36} {:<8} {:<8} {}; {}\n", name, layer, family, rec, tim);
  };
  for (const HookInfo& h : kHooks) row(h.name, h.layer(), family_name(h.family), rec_kind_text(h.kind), timing_text(h.timing));
  for (const char* name : kNvmlHooks) row(name, "nvml", "memory", kNvmlHookText, "none");
  return 0;
}

int cmd_options(bool markdown) {
  using namespace cudashim::policy;
  if (markdown) {
    std::cout << settings_markdown();
    return 0;
  }
  for (const cudashim::SettingRow& r : cudashim::kSettingRows) {
    std::cout << fmt::format("CUDASHIM_{:<20} {:<36} default '{}'\n    {}\n", r.name,
                             *r.toml_key ? r.toml_key : "(environment only)", r.default_value, r.doc);
  }
  return 0;
}

// `cudashim findings [--markdown]`: the findings table (catalog/findings.def) grouped by
// domain, then the old ids `cudashim report` still reads; as the Markdown of
// docs/findings.md, or one entry each.
int cmd_findings(bool markdown) {
  using namespace cudashim;
  for (size_t d = 0; d < kFindingDomainCount; ++d) {
    const auto domain = static_cast<FindingDomain>(d);
    if (markdown)
      std::cout << fmt::format("{}## {} (`{}`)\n\n| Id | Severity | What it means | Fix |\n|---|---|---|---|\n",
                               d ? "\n" : "", domain_heading(domain), domain_name(domain));
    else
      std::cout << fmt::format("{}{} ({})\n", d ? "\n" : "", domain_heading(domain), domain_name(domain));
    for (const FindingInfo& f : kFindings) {
      if (f.domain != domain) continue;
      if (markdown)
        std::cout << fmt::format("| `{}` | {} | {} | {} |\n", f.name, severity_name(f.severity), f.title, f.fix);
      else
        std::cout << fmt::format("{:<36} {:<8} {}\n    fix: {}\n{}", f.name, severity_name(f.severity), f.title, f.fix,
                                 *f.alias ? fmt::format("    old id: {}\n", f.alias) : "");
    }
  }
  if (markdown) {
    std::cout << "\n## Old ids\n\nReports written before the one findings table name these findings by their old "
                 "ids; `cudashim report` reads each as its id today.\n\n| Old id | Id |\n|---|---|\n";
    for (const FindingInfo& f : kFindings)
      if (*f.alias) std::cout << fmt::format("| `{}` | `{}` |\n", f.alias, f.name);
  }
  return 0;
}

// `cudashim policy check FILE`: validate a policy file and print the effective policy
// (defaults, /etc/cudashim/policy.toml unless FILE is it, FILE, then the environment).
int cmd_policy_check(const std::string& file) {
  using namespace cudashim::policy;
  // Every error is listed (a process lists the first few of each file). The file is read like
  // the shim reads it: a FIFO or a device is refused, never waited on.
  LoadResult r = load_policy(
      [](const char* n) -> const char* { return std::string_view(n) == "CUDASHIM_POLICY" ? nullptr : std::getenv(n); },
      "/etc/cudashim/policy.toml", std::numeric_limits<std::size_t>::max());
  apply_file(r, file, file == "/etc/cudashim/policy.toml");
  for (const auto& e : r.error_lines()) fmt::print(stderr, "error: {}\n", e);
  for (const auto& w : r.warnings) fmt::print(stderr, "warning: {}\n", w);
  if (!r.errors.empty()) {
    fmt::print(stderr,
               "{}: invalid; a process would stop at its first CUDA call (exit 78){}\n", cudashim::policy::printable(file),
               r.stop() ? "" : ", but this policy says on_invalid = \"warn\": it would run without it");
    return 78;
  }
  std::cout << "# effective policy: defaults, /etc/cudashim/policy.toml, " << file << ", CUDASHIM_* environment\n"
            << describe(r.policy);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cudashim: see what a CUDA/PyTorch job really does, without editing it"};
  app.require_subcommand(1);
  app.set_version_flag("--version", CUDASHIM_VERSION);

  cudashim::tools::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "run a command with the shim preloaded and summarize every process");
  run_cmd->add_option("--out", run.out_dir, "folder for the reports (default: ./cudashim-runs/<time>-<pid>)");
  run_cmd->add_option("--shim", run.shim, "path of libcudashim.so (default: found next to this program)");
  run_cmd->add_flag("--quiet", run.quiet, "print no summary at the end");
  run_cmd->add_option("command", run.command, "the command to run, after --")->required();

  std::vector<std::string> report_paths;
  bool report_json = false;
  auto* report_cmd = app.add_subcommand("report", "summarize report files or run folders (exit 0: all read; 3: some "
                                                  "files could not be, each named on stderr; 1: no report; 2: --html unwritable)");
  report_cmd->add_option("paths", report_paths, "report files or folders")->required();
  report_cmd->add_flag("--json", report_json, "print the reports merged as JSON");
  std::string report_html;
  report_cmd->add_option("--html", report_html, "also write one self-contained HTML page with plots to this file");

  bool names_only = false, hooks_md = false;
  auto* hooks_cmd = app.add_subcommand("hooks", "list every interposed ABI symbol and what is recorded for it");
  hooks_cmd->add_flag("--names", names_only, "names only, one per line");
  hooks_cmd->add_flag("--markdown", hooks_md, "a Markdown table (docs/hooks.md)");

  bool options_md = false;
  auto* options_cmd = app.add_subcommand("options", "list every setting: CUDASHIM_* variable, policy file key, default");
  options_cmd->add_flag("--markdown", options_md, "a Markdown table (docs/options.md)");

  bool findings_md = false;
  auto* findings_cmd = app.add_subcommand("findings", "list every finding id with its severity and fix");
  findings_cmd->add_flag("--markdown", findings_md, "a Markdown table (docs/findings.md)");

  std::string policy_file;
  auto* policy_cmd = app.add_subcommand("policy", "policy files");
  policy_cmd->require_subcommand(1);
  auto* policy_check = policy_cmd->add_subcommand("check", "validate a policy file and print the effective policy");
  policy_check->add_option("file", policy_file, "the TOML policy file")->required();

  cudashim::tools::DoctorOptions doctor;
  auto* doctor_cmd = app.add_subcommand("doctor", "check binaries, libraries, folders or a Python environment offline (no GPU needed)");
  doctor_cmd->add_flag("--json", doctor.json, "print the findings and libraries as JSON");
  doctor_cmd->add_option("--sm", doctor.sm, "GPU compute capability to check fatbins for: 90, 9.0 or sm_90 (default: nvidia-smi, else 90)");
  doctor_cmd->add_option("paths", doctor.paths, "ELF files, folders, or a site-packages folder")->required();
  doctor_cmd->add_option("--driver-version-file", doctor.driver_version_file,
                         "the kernel module's version file to check the driver bridge against (default /proc/driver/nvidia/version)");
  doctor_cmd->add_option("--mountinfo", doctor.mountinfo_file, "mount table telling host bind-mounts (default /proc/self/mountinfo)");
  doctor_cmd->add_option("--jobs", doctor.jobs, "files examined at once (default: one per core, at most 16)");
  doctor_cmd->add_flag("--verbose", doctor.verbose, "also show the notes inside NVIDIA's and the frameworks' own files");
  doctor_cmd->add_option("--driver-version", doctor.driver_version,
                         "the driver release to check the framework against, e.g. 535.104.05 (default: the kernel module's)");

  CLI11_PARSE(app, argc, argv);
  if (*doctor_cmd) return cudashim::tools::run_doctor(doctor);
  if (*run_cmd) return cudashim::tools::run_command(run);
  if (*report_cmd) return cmd_report(report_paths, report_json, report_html);
  if (*hooks_cmd) return cmd_hooks(names_only, hooks_md);
  if (*options_cmd) return cmd_options(options_md);
  if (*findings_cmd) return cmd_findings(findings_md);
  if (*policy_check) return cmd_policy_check(policy_file);
  return 2;
}
