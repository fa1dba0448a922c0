// summary_lines.cpp: see summary_lines.h.
#include "tools/summary_lines.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "recorder/no_cuda_record.h"
#include "tools/input_files.h"

namespace fs = std::filesystem;

namespace cudashim::tools {
namespace {

bool is_no_cuda_name(const std::string& name) {
  const std::string_view tail = recorder::kNoCudaSuffix;
  return name.rfind("cudashim-", 0) == 0 && name.size() > tail.size() + 9 &&
         name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

// The host a file is named for: cudashim-<host>.no-cuda.
std::string host_of(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return name.substr(9, name.size() - 9 - std::string_view(recorder::kNoCudaSuffix).size());
}

// The no-cuda files under `dir`, as run_folder_files walks it (subfolders, no link followed).
void folder_files(const std::string& dir, std::vector<std::string>& out) {
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end; !ec && it != end;
       it.increment(ec)) {
    std::error_code lec;
    if (!fs::is_directory(it->symlink_status(lec)) && is_no_cuda_name(it->path().filename().string()))
      out.push_back(it->path().string());
  }
}

}  // namespace

NoCudaProcesses read_no_cuda(const std::vector<std::string>& paths, const std::vector<LoadedReport>& reports,
                             std::vector<std::string>& problems) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) folder_files(p, files);
    else if (is_no_cuda_name(fs::path(p).filename().string())) files.push_back(p);
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  // Processes that left something else: a report names its host, a stream or a record only its pid.
  std::set<std::pair<std::string, int64_t>> reported;
  std::set<int64_t> reported_pid;
  for (const LoadedReport& r : reports) {
    if (const auto* d = std::get_if<ProcessReport>(&r.what)) reported.insert({d->host, d->pid});
    else if (const auto* c = std::get_if<CrashRecord>(&r.what)) reported_pid.insert(c->pid);
    else if (const auto* s = std::get_if<StreamSummary>(&r.what)) reported_pid.insert(s->pid);
  }
  NoCudaProcesses n;
  std::map<std::pair<std::string, int64_t>, std::string> name_of;  // host and pid: the last line's name
  for (const std::string& f : files) {
    std::string why;
    auto file = InputFile::open(f, why);
    if (!file) {
      problems.push_back(fmt::format("{}: {}; the processes it lists are not counted", shown(f), why));
      continue;
    }
    if (file->size() >= recorder::kNoCudaFileLimit) n.floor = true;
    const std::string host = host_of(f);
    std::string line;
    for (uint64_t line_no = 1;; ++line_no) {
      const InputFile::Line got = file->next_line(line, 256);
      if (got == InputFile::Line::end || got == InputFile::Line::incomplete) break;  // a write cut short: not a line
      if (got != InputFile::Line::complete) {
        problems.push_back(fmt::format("{}: line {} {}; the lines after it are not counted", shown(f), line_no,
                                       got == InputFile::Line::error ? line : std::string("is too long")));
        break;
      }
      const size_t tab = line.find('\t');
      int64_t pid = 0;
      const bool digits = tab > 0 && tab != std::string::npos && tab <= 10 &&
                          std::all_of(line.begin(), line.begin() + static_cast<long>(tab), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || tab + 1 >= line.size()) {
        problems.push_back(fmt::format("{}: line {} is not '<pid><TAB><name>' as the shim writes it; skipped", shown(f), line_no));
        continue;
      }
      pid = std::stoll(line.substr(0, tab));
      name_of[{host, pid}] = line.substr(tab + 1);
    }
  }
  std::map<std::string, uint64_t> counts;
  for (const auto& [who, name] : name_of) {
    if (reported.count(who) || reported_pid.count(who.second)) continue;
    ++counts[name];
    ++n.count;
  }
  n.by_name.assign(counts.begin(), counts.end());
  std::stable_sort(n.by_name.begin(), n.by_name.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return n;
}

namespace {

void count_name(NoCudaProcesses& n, const std::string& name) {
  ++n.count;
  auto it = std::find_if(n.by_name.begin(), n.by_name.end(), [&](const auto& p) { return p.first == name; });
  if (it == n.by_name.end()) n.by_name.emplace_back(name, 1);
  else ++it->second;
  std::stable_sort(n.by_name.begin(), n.by_name.end(),
                   [](const auto& a, const auto& b) { return a.second != b.second ? a.second > b.second : a.first < b.first; });
}

bool quiet(const ProcessReport& d) {
  const bool calls = std::any_of(d.api.begin(), d.api.end(), [](const ApiRow& r) { return r.calls > 0; });
  const bool warned = std::any_of(d.library_findings.begin(), d.library_findings.end(),
                                  [](const Finding& f) { return f.severity() != Severity::info; });
  const bool no_driver = d.libcuda_dlopen_requests > 0 && d.libcuda_loaded_null;
  // A refused setting is the job's environment, said in the sections of the processes that used CUDA.
  return !calls && d.findings.empty() && !warned && d.oom.count == 0 && d.leaked_allocations == 0 && !no_driver;
}

}  // namespace

void fold_quiet_reports(std::vector<LoadedReport>& reports, bool verbose, NoCudaProcesses& n) {
  if (verbose) return;
  const auto kept = std::stable_partition(reports.begin(), reports.end(), [](const LoadedReport& r) {
    const auto* d = std::get_if<ProcessReport>(&r.what);
    return d == nullptr || !quiet(*d);
  });
  for (auto it = kept; it != reports.end(); ++it) {
    const ProcessReport& d = std::get<ProcessReport>(it->what);
    std::string name = d.argv.empty() ? d.exe : d.argv[0];
    name = name.substr(name.rfind('/') == std::string::npos ? 0 : name.rfind('/') + 1);
    if (!name.empty() && name[0] == '-') name.erase(0, 1);
    count_name(n, name.empty() ? "?" : name);
    ++n.quiet_reports;
  }
  reports.erase(kept, reports.end());
}

std::string no_cuda_text(const NoCudaProcesses& n) {
  if (n.count == 0) return "";
  constexpr size_t kNames = 6;
  std::string names;
  for (size_t i = 0; i < n.by_name.size() && i < kNames; ++i)
    names += fmt::format("{}{} ({})", i ? ", " : "", shown(n.by_name[i].first), n.by_name[i].second);
  if (n.by_name.size() > kNames) names += fmt::format(", and {} more names", n.by_name.size() - kNames);
  const std::string reports =
      n.quiet_reports == 0 ? ""
      : n.quiet_reports == n.count
          ? fmt::format(" ({} only loaded the driver: --verbose shows {} report{})", n.quiet_reports == 1 ? "it" : "they",
                        n.quiet_reports == 1 ? "its" : "their", n.quiet_reports == 1 ? "" : "s")
          : fmt::format(" ({} of them only loaded the driver: --verbose shows {} report{})", n.quiet_reports,
                        n.quiet_reports == 1 ? "its" : "their", n.quiet_reports == 1 ? "" : "s");
  return fmt::format("{}{} process{} made no CUDA call: {}{}\n", n.floor ? "at least " : "", n.count,
                     n.count == 1 ? "" : "es", names, reports);
}

std::string refused_text(const std::vector<RefusedSetting>& refused) {
  std::string out;
  for (const RefusedSetting& r : refused)
    out += fmt::format("    refused {}='{}' from {}: {}; kept '{}'\n", shown(r.setting), shown(r.value), shown(r.from),
                       shown(r.why), shown(r.kept));
  return out;
}

bool policy_is_default(const PolicyInForce& p) {
  const bool from_file = std::any_of(p.sources.begin(), p.sources.end(),
                                     [](const auto& s) { return s.second.rfind("CUDASHIM_", 0) != 0; });
  return !p.mem_cap && p.cap_bytes_device0 == 0 && (p.managed.empty() || p.managed == "allow") && !p.locked &&
         !from_file && p.refused.empty() && p.applied_env.empty();
}

std::string runtimes_text(const std::vector<LoadedLibrary>& libraries, const std::string& listed) {
  std::set<std::string> versions;
  std::vector<std::string> static_in;
  size_t copies = 0;
  for (const LoadedLibrary& l : libraries) {
    if (l.family != "cudart") continue;
    ++copies;
    versions.insert(l.version);
    if (l.linkage == "static") static_in.push_back(shown(l.file.substr(l.file.rfind('/') + 1)));
  }
  if (copies < 2 || versions.size() != 1 || versions.begin()->empty() || static_in.empty()) return listed;
  std::string where;
  for (size_t i = 0; i < static_in.size() && i < 2; ++i) where += (i ? ", " : "") + static_in[i];
  if (static_in.size() > 2) where += ", ...";
  if (static_in.size() == copies) return fmt::format("{} (static: {} copies, in {})", shown(*versions.begin()), copies, where);
  return fmt::format("{} (and {} static cop{} of it, in {})", shown(*versions.begin()), static_in.size(),
                     static_in.size() == 1 ? "y" : "ies", where);
}

std::string info_findings_text(const ProcessReport& d, bool verbose) {
  if (verbose) return "";
  std::vector<std::string> ids;
  for (const auto* list : {&d.findings, &d.library_findings})
    for (const Finding& f : *list)
      if (f.severity() == Severity::info && std::find(ids.begin(), ids.end(), f.name()) == ids.end()) ids.push_back(f.name());
  size_t count = 0;
  for (const auto* list : {&d.findings, &d.library_findings})
    count += static_cast<size_t>(std::count_if(list->begin(), list->end(), [](const Finding& f) { return f.severity() == Severity::info; }));
  if (count == 0) return "";
  std::string names;
  for (size_t i = 0; i < ids.size() && i < 3; ++i) names += (i ? ", " : "") + shown(ids[i]);
  if (ids.size() > 3) names += ", ...";
  return fmt::format("  {} info finding{} ({}: --verbose lists them)\n", count, count == 1 ? "" : "s", names);
}

nlohmann::json no_cuda_json(const NoCudaProcesses& n) {
  nlohmann::json by = nlohmann::json::object();
  for (const auto& [name, count] : n.by_name) by[name] = count;
  return {{"count", n.count}, {"floor", n.floor}, {"by_name", std::move(by)}};
}

}  // namespace cudashim::tools
