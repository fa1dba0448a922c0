// main.cpp: the `cudashim` command line.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <limits>
#include <fstream>
#include <iostream>

#include "catalog/findings.h"
#include "policy/did_you_mean.h"
#include "policy/printable.h"
#include "policy/settings_load.h"
#include "catalog/hooks.h"
#include "tools/cli_completion.h"
#include "tools/cli_help.h"
#include "tools/cli_man.h"
#include "tools/cli_parse.h"
#include "tools/doctor.h"
#include "tools/fleet_exporter.h"
#include "tools/html_report.h"
#include "tools/json_output.h"
#include "tools/rank_compare.h"
#include "tools/report_reader.h"
#include "tools/run_command.h"
#include "tools/summary_lines.h"

namespace {

// `cudashim report PATH...`. Exit status: 0 when every input was read; 3 when some could
// not be (each named on stderr in one line) and the rest is summarized, or when the HTML
// page cannot be written; 1 when no report was found or none could be read.
int cmd_report(const std::vector<std::string>& paths, bool json, const std::string& html, bool verbose) {
  std::vector<std::string> problems;
  auto reports = cudashim::tools::load_reports(paths, problems);
  auto idle = cudashim::tools::read_no_cuda(paths, reports, problems);  // counted in one line
  const bool none = reports.empty();
  const std::string page = html.empty() ? "" : cudashim::tools::render_html(reports, problems);
  for (const auto& p : problems) fmt::print(stderr, "warning: {}\n", p);
  if (!html.empty()) {
    std::ofstream f(html);
    f << page;
    if (!f) {
      fmt::print(stderr, "cudashim report: cannot write {}: check the folder exists and is writable\n", html);
      return 3;
    }
    fmt::print(stderr, "wrote {} ({} reports)\n", html, reports.size());
  }
  const auto ranks = cudashim::tools::compare_ranks(reports);
  if (json) {
    auto merged = cudashim::tools::merge_reports(reports);
    if (!ranks.json.is_null()) merged["rank_comparison"] = ranks.json;
    if (idle.count > 0) merged["no_cuda_processes"] = cudashim::tools::no_cuda_json(idle);
    std::cout << cudashim::tools::dump_utf8(merged, 2) << "\n";
  } else {
    const bool color = isatty(1) && std::getenv("NO_COLOR") == nullptr;
    cudashim::tools::fold_quiet_reports(reports, verbose, idle);  // the JSON and the page keep them
    std::cout << cudashim::tools::render_summary(reports, color, verbose) << ranks.text
              << cudashim::tools::no_cuda_text(idle);
    if (none) std::cout << "no cudashim reports found in the given paths\n";
  }
  if (none) return 1;
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
// (defaults, /etc/cudashim/policy.toml unless FILE is it, FILE, then the environment, whose
// unknown CUDASHIM_* variables are warned about as a process would).
int cmd_policy_check(const std::string& file) {
  using namespace cudashim::policy;
  // Every error is listed (a process lists the first few of each file). The file is read like
  // the shim reads it: a FIFO or a device is refused, never waited on.
  LoadResult r = load_policy(
      [](const char* n) -> const char* { return std::string_view(n) == "CUDASHIM_POLICY" ? nullptr : std::getenv(n); },
      "/etc/cudashim/policy.toml", std::numeric_limits<std::size_t>::max());
  apply_file(r, file, file == "/etc/cudashim/policy.toml");
  warn_unknown_variables(r, environ);
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

// Returns the option `name` of `args` as a whole number in [0, 1024], or fills `error`.
bool read_count(const cudashim::tools::ParsedArgs& args, const char* name, int& out, std::string& error) {
  const std::string v = args.value(name);
  if (!v.empty() && v.size() <= 4 && v.find_first_not_of("0123456789") == std::string::npos) {
    out = std::stoi(v);
    if (out <= 1024) return true;
  }
  error = fmt::format("cudashim {}: {} '{}' is not a whole number from 0 (one per core) to 1024", args.command->name, name,
                      cudashim::policy::printable(v, 40));
  return false;
}

// `cudashim exporter`: the options read, then tools/fleet_exporter.h.
int cmd_exporter(const cudashim::tools::ParsedArgs& args) {
  cudashim::tools::ExporterOptions o;
  o.dir = args.value("--dir");
  o.listen = args.value("--listen", o.listen);
  o.textfile = args.value("--textfile");
  o.once = args.has("--once");
  o.nvidia_gpus = args.value("--nvidia-gpus", o.nvidia_gpus);
  auto whole = [&](const char* name, int max, int& out) {
    const std::string v = args.value(name);
    if (!v.empty() && v.size() <= 6 && v.find_first_not_of("0123456789") == std::string::npos && std::stoi(v) <= max) {
      out = std::stoi(v);
      return true;
    }
    fmt::print(stderr, "cudashim exporter: {} '{}' is not a whole number from 0 to {}\n", name,
               cudashim::policy::printable(v, 40), max);
    return false;
  };
  if (args.has("--port") && !whole("--port", 65535, o.port)) return cudashim::tools::kUsageExit;
  if (args.has("--keep-exited") && !whole("--keep-exited", 86400, o.keep_exited_s)) return cudashim::tools::kUsageExit;
  return cudashim::tools::run_exporter(o);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cudashim::tools;
  ParsedArgs args;
  std::string error;
  if (!parse_command_line(std::vector<std::string>(argv + 1, argv + argc), args, error)) {
    fmt::print(stderr, "{}\n", error);
    return kUsageExit;
  }
  if (args.version) {
    std::cout << version_text();
    return 0;
  }
  if (args.help) {
    std::cout << help_text(args.topic);
    return 0;
  }
  const std::string cmd = args.command->name;
  if (cmd == "help") {
    if (args.has("--markdown")) {
      std::cout << cli_markdown();
      return 0;
    }
    const std::string topic = args.operands.empty() ? "" : args.operands[0];
    if (!is_help_topic(topic)) {
      std::vector<std::string_view> topics;
      for (const CommandSpec& c : kCommands) topics.emplace_back(c.name);
      for (const CommandGroup& g : kCommandGroups) topics.emplace_back(g.name);
      fmt::print(stderr, "cudashim help: '{}' is not a cudashim command{} (`cudashim help` lists them)\n",
                 cudashim::policy::printable(topic, 80), cudashim::policy::did_you_mean(topic, topics));
      return kUsageExit;
    }
    std::cout << help_text(topic);
    return 0;
  }
  if (cmd == "completion") {
    const std::string script = completion_script(args.operands[0]);
    if (script.empty()) {
      fmt::print(stderr, "cudashim completion: '{}' is not a shell it completes for: use bash or zsh\n",
                 cudashim::policy::printable(args.operands[0], 40));
      return kUsageExit;
    }
    std::cout << script;
    return 0;
  }
  if (cmd == "man") {
    std::cout << man_page();
    return 0;
  }
  if (cmd == "run") {
    RunOptions run;
    run.out_dir = args.value("--out");
    run.shim = args.value("--shim");
    run.quiet = args.has("--quiet");
    run.verbose = args.has("--verbose");
    run.command = args.operands;
    return run_command(run);
  }
  if (cmd == "report") return cmd_report(args.operands, args.has("--json"), args.value("--html"), args.has("--verbose"));
  if (cmd == "doctor") {
    DoctorOptions doctor;
    doctor.json = args.has("--json");
    doctor.sm = args.value("--sm");
    doctor.paths = args.operands;
    doctor.driver_version_file = args.value("--driver-version-file", doctor.driver_version_file);
    doctor.mountinfo_file = args.value("--mountinfo", doctor.mountinfo_file);
    doctor.verbose = args.has("--verbose");
    doctor.driver_version = args.value("--driver-version", doctor.driver_version);
    if (args.has("--jobs") && !read_count(args, "--jobs", doctor.jobs, error)) {
      fmt::print(stderr, "{}\n", error);
      return kUsageExit;
    }
    return run_doctor(doctor);
  }
  if (cmd == "exporter") return cmd_exporter(args);
  if (cmd == "hooks") return cmd_hooks(args.has("--names"), args.has("--markdown"));
  if (cmd == "options") return cmd_options(args.has("--markdown"));
  if (cmd == "findings") return cmd_findings(args.has("--markdown"));
  if (cmd == "policy check") return cmd_policy_check(args.operands[0]);
  fmt::print(stderr, "cudashim: '{}' has no action (a row of tools/cli_spec.h without its branch in main.cpp)\n", cmd);
  return kUsageExit;
}
