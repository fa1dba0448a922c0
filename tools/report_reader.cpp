// report_reader.cpp: load and summarize per-process reports.
#include "tools/report_reader.h"

#include <cxxabi.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "catalog/findings.h"
#include "symbols/debug_lines.h"
#include "symbols/symtab.h"

namespace fs = std::filesystem;

namespace cudashim::tools {
namespace {

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

std::string human_ns(uint64_t ns) {
  if (ns >= 1000000000ull) return fmt::format("{:.2f} s", ns / 1e9);
  if (ns >= 1000000ull) return fmt::format("{:.1f} ms", ns / 1e6);
  if (ns >= 1000ull) return fmt::format("{:.1f} us", ns / 1e3);
  return fmt::format("{} ns", ns);
}

// The CUDA driver's names for the result codes a summary is likely to show.
std::string cu_error_name(uint64_t code) {
  switch (code) {
    case 1: return "CUDA_ERROR_INVALID_VALUE";
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    case 222: return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case 500: return "CUDA_ERROR_NOT_FOUND";
    case 700: return "CUDA_ERROR_ILLEGAL_ADDRESS";
    case 803: return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case 804: return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default: return fmt::format("error {}", code);
  }
}

// A module file as it is at report time, opened once per `cudashim report`.
struct ModuleNow {
  bool exists = false;
  std::string error;  // why its symbols or lines cannot be read ("" when they can)
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  std::optional<symbols::DebugLines> lines;
  std::vector<symbols::FunctionSymbol> functions;
};

const ModuleNow& module_now(const std::string& path) {
  static std::map<std::string, ModuleNow> cache;
  auto [it, fresh] = cache.try_emplace(path);
  ModuleNow& m = it->second;
  if (!fresh) return m;
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return m;
  m.exists = true;
  m.size = static_cast<uint64_t>(st.st_size);
  m.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  auto lines = symbols::DebugLines::open(path);
  if (!lines.ok()) {
    m.error = lines.error();
    return m;
  }
  m.lines.emplace(std::move(lines).value());
  // A separate debug file keeps the full .symtab that the installed file was stripped of.
  const std::string& dbg = m.lines->debug_file();
  if (auto fns = symbols::read_function_symbols(!dbg.empty() && dbg != path ? dbg : path); fns.ok() && !fns.value().empty())
    m.functions = std::move(fns).value();
  else if (auto own = symbols::read_function_symbols(path); own.ok())
    m.functions = std::move(own).value();
  return m;
}

std::string demangled(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && d != nullptr ? d : name;
  std::free(d);
  return out;
}

// One recorded frame {file, address, build_id, size, mtime_ns} against the file now.
nlohmann::json resolve_frame(const nlohmann::json& frame) {
  using nlohmann::json;
  json out = {{"status", "unknown"}, {"text", "?"}, {"function", nullptr}, {"file", nullptr},
              {"line", nullptr},     {"column", nullptr}, {"debug_file", nullptr}};
  if (!frame.is_object() || !frame.contains("file") || !frame["file"].is_string() || !frame.contains("address") ||
      !frame["address"].is_number_unsigned())
    return out;
  const std::string path = frame["file"].get<std::string>();
  const uint64_t address = frame["address"].get<uint64_t>();
  const std::string base = fs::path(path).filename().string();
  const std::string raw = fmt::format("{}+{:#x}", base, address);
  const ModuleNow& m = module_now(path);
  auto no_line = [&](const char* status, const std::string& why) {
    out["status"] = status;
    out["text"] = fmt::format("{} ({}; no source line)", raw, why);
    return out;
  };
  if (!m.exists) return no_line("missing", fmt::format("{} is gone since the run", path));
  if (!m.lines) return no_line("unreadable", m.error);
  const std::string rec_id = frame.value("build_id", "");
  const uint64_t rec_size = frame.value("size", 0ull);
  const int64_t rec_mtime = frame.value("mtime_ns", int64_t{0});
  if (!rec_id.empty() && rec_id != m.lines->build_id())
    return no_line("changed", fmt::format("{} changed since the run: build-id {} then, {} now", path, rec_id,
                                          m.lines->build_id().empty() ? "none" : m.lines->build_id()));
  if (rec_id.empty() && rec_size != 0 && (rec_size != m.size || rec_mtime != m.mtime_ns))
    return no_line("changed", fmt::format("{} changed since the run: size or modification time differ", path));
  // The call is the instruction before the return address.
  const uint64_t pc = address > 0 ? address - 1 : 0;
  std::string func, at = raw;
  if (const auto* f = symbols::function_at(m.functions, pc)) {
    func = demangled(f->name);
    out["function"] = func;
    at = fmt::format("{}!{}+{:#x}", base, func, address - f->value);
  }
  const auto line = m.lines->line_at(pc);
  if (!line) {
    out["status"] = func.empty() ? "address" : "function";
    out["text"] = m.lines->has_dwarf() ? fmt::format("{} (no line table covers it)", at)
                                       : fmt::format("{} (no debug info)", at);
    return out;
  }
  out["status"] = "line";
  out["file"] = line->file;
  out["line"] = line->line;
  if (line->column > 0) out["column"] = line->column;
  out["debug_file"] = m.lines->debug_file();
  out["text"] = fmt::format("{}:{} ({})", line->file, line->line, func.empty() ? raw : fmt::format("{} in {}", func, base));
  return out;
}

// Returns the id the row of `id` (a finding's id, as a report or stream wrote it) has
// today: reports written before the one findings table carry the old ids of library,
// driver and doctor findings ("driver-too-old"), catalog/findings.def's aliases. An id no
// row knows is returned as it is.
std::string current_finding_id(const std::string& id) {
  const FindingId f = find_finding(id);
  return f == FindingId::none ? id : finding_info(f).name;
}

// The same, for every finding of a report: "findings" and "library_findings".
void current_finding_ids(nlohmann::json& doc) {
  for (const char* section : {"findings", "library_findings"}) {
    if (!doc.contains(section) || !doc[section].is_array()) continue;
    for (auto& f : doc[section])
      if (f.is_object() && f.contains("id") && f["id"].is_string())
        f["id"] = current_finding_id(f["id"].get<std::string>());
  }
}

void add_file(const fs::path& p, std::vector<LoadedReport>& out, std::vector<std::string>& problems) {
  std::ifstream f(p);
  if (!f) {
    problems.push_back(fmt::format("{}: cannot be read", p.string()));
    return;
  }
  nlohmann::json doc = nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    problems.push_back(fmt::format("{}: not a JSON report (truncated or corrupt); skipped", p.string()));
    return;
  }
  if (doc.value("schema", "") == "cudashim.crash/1") {
    out.push_back({p.string(), std::move(doc)});
    return;
  }
  if (doc.value("schema", "") != "cudashim.report/1") {
    problems.push_back(fmt::format("{}: schema '{}' is not cudashim.report/1; skipped", p.string(),
                                   doc.value("schema", "none")));
    return;
  }
  current_finding_ids(doc);
  resolve_native_sites(doc);
  out.push_back({p.string(), std::move(doc)});
}

// A process's event stream (cudashim-*.ndjson), for a process that left no report (killed
// with SIGKILL, or still running): what it said up to its last complete line.
void add_stream(const fs::path& p, std::vector<LoadedReport>& out, std::vector<std::string>& problems) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    problems.push_back(fmt::format("{}: cannot be read", p.string()));
    return;
  }
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  nlohmann::json doc = {{"schema", "cudashim.stream-summary/1"}, {"pid", 0}, {"lines", 0}, {"ended", false},
                        {"last_t_ns", 0}, {"last_counters", nullptr}, {"findings", nlohmann::json::array()},
                        {"libraries_loaded", 0}, {"signal", nullptr}, {"cut", nullptr}};
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const bool complete = nl != std::string::npos;
    const std::string line = text.substr(pos, complete ? nl - pos : std::string::npos);
    ++line_no;
    nlohmann::json ev = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!complete || ev.is_discarded() || !ev.is_object()) {
      doc["cut"] = fmt::format("line {} is {} ({} bytes) and was not read{}", line_no,
                               complete ? "not JSON" : "incomplete", line.size(),
                               complete ? fmt::format(", nor the {} bytes after it", text.size() - nl - 1) : "");
      break;
    }
    doc["lines"] = line_no;
    if (ev.contains("t_ns") && ev["t_ns"].is_number()) doc["last_t_ns"] = ev["t_ns"];
    const std::string type = ev.value("type", "");
    if (type == "start") doc["pid"] = ev.value("pid", 0);
    else if (type == "snapshot" || type == "exit") doc["last_counters"] = ev;
    if (type == "exit") doc["ended"] = true;
    else if (type == "finding") doc["findings"].push_back(current_finding_id(ev.value("id", "?")));
    else if (type == "library_load") doc["libraries_loaded"] = doc["libraries_loaded"].get<int>() + 1;
    else if (type == "signal") doc["signal"] = ev;
    pos = nl + 1;
  }
  if (line_no == 0) {
    problems.push_back(fmt::format("{}: an empty event stream; skipped", p.string()));
    return;
  }
  out.push_back({p.string(), std::move(doc)});
}

// True when `p` (cudashim-X.ndjson) has its process's report beside it (cudashim-X.json).
bool has_report(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::path(p).replace_extension(".json"), ec);
}

}  // namespace

void resolve_native_sites(nlohmann::json& doc) {
  if (!doc.contains("findings") || !doc["findings"].is_array()) return;
  for (auto& f : doc["findings"]) {
    if (!f.is_object() || !f.contains("sites") || !f["sites"].is_array()) continue;
    for (auto& site : f["sites"]) {
      if (!site.is_object()) continue;
      if (site.contains("where_frame") && site["where_frame"].is_object())
        site["where_source"] = resolve_frame(site["where_frame"]);
      if (site.contains("frames") && site["frames"].is_array()) {
        nlohmann::json texts = nlohmann::json::array();
        for (const auto& fr : site["frames"]) texts.push_back(resolve_frame(fr)["text"]);
        site["native_source"] = std::move(texts);
      }
    }
  }
}

std::string site_where(const nlohmann::json& site) {
  if (site.contains("where_source") && site["where_source"].is_object() && site["where_source"].contains("text") &&
      site["where_source"]["text"].is_string())
    return site["where_source"]["text"].get<std::string>();
  return site.value("where", "?");
}

std::vector<LoadedReport> load_reports(const std::vector<std::string>& paths, std::vector<std::string>& problems) {
  std::vector<LoadedReport> out;
  for (const std::string& s : paths) {
    std::error_code ec;
    const fs::path p(s);
    if (fs::is_directory(p, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::recursive_directory_iterator(p, ec)) {
        const std::string name = e.path().filename().string();
        if (e.is_regular_file() && name.rfind("cudashim-", 0) == 0 &&
            (e.path().extension() == ".json" || (e.path().extension() == ".ndjson" && !has_report(e.path()))))
          files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());
      for (const auto& f : files) (f.extension() == ".ndjson" ? add_stream : add_file)(f, out, problems);
    } else if (fs::exists(p, ec)) {
      (p.extension() == ".ndjson" ? add_stream : add_file)(p, out, problems);
    } else {
      problems.push_back(fmt::format("{}: no such file or folder", s));
    }
  }
  return out;
}

std::string render_summary(const std::vector<LoadedReport>& reports, bool color) {
  const char* bold = color ? "\033[1m" : "";
  const char* yellow = color ? "\033[33m" : "";
  const char* reset = color ? "\033[0m" : "";
  std::string out;
  for (const LoadedReport& r : reports) {
    const auto& d = r.doc;
    if (d.value("schema", "") == "cudashim.crash/1") {  // a flight record: what happened, the last calls
      out += fmt::format("{}CRASH{} process {}: ", bold, reset, d.value("pid", 0));
      if (d.value("reason", "") == "signal")
        out += fmt::format("{} at {}\n", d.value("signal_name", "signal"), d.value("fault_address", "?"));
      else
        out += fmt::format("{} returned {} ({})\n", d.value("api", "?"), cu_error_name(d.value("result", 0ull)),
                           d.value("result", 0ull));
      for (const auto& t : d.value("threads", nlohmann::json::array())) {
        std::string calls;
        const auto& lc = t.value("last_calls", nlohmann::json::array());
        for (size_t i = lc.size() > 6 ? lc.size() - 6 : 0; i < lc.size(); ++i)
          calls += fmt::format("{}{}{}", calls.empty() ? "" : ", ", lc[i].value("api", "?"),
                               lc[i].value("result", 0) ? fmt::format(" -> {}", lc[i].value("result", 0)) : "");
        out += fmt::format("  thread {}: {} calls; last: {}\n", t.value("tid", 0), t.value("calls", 0), calls);
      }
      out += fmt::format("  record: {}\n", r.path);
      continue;
    }
    if (d.value("schema", "") == "cudashim.stream-summary/1") {  // no report: what its event stream said
      out += fmt::format("{}process {}{}: no report; its event stream ", bold, d.value("pid", 0), reset);
      const double t = d.value("last_t_ns", 0ull) / 1e9;
      if (d.value("ended", false))
        out += fmt::format("ends with its exit line at {:.1f} s\n", t);
      else
        out += fmt::format("stops at {:.1f} s without an exit line: the process was killed (SIGKILL) or is still "
                           "running\n", t);
      if (const auto& c = d["last_counters"]; c.is_object()) {
        out += fmt::format("  {} hooked calls ({} failed), blocked {}, as of {:.1f} s\n", c.value("calls", 0ull),
                           c.value("errors", 0ull), human_ns(c.value("blocked_ns", 0ull)), c.value("t_ns", 0ull) / 1e9);
        for (const auto& dev : c.value("devices", nlohmann::json::array()))
          out += fmt::format("  device {}: live {}, peak {}\n", dev.value("device", 0),
                             human_bytes(dev.value("live_bytes", 0ull)), human_bytes(dev.value("peak_bytes", 0ull)));
      }
      for (const auto& id : d.value("findings", nlohmann::json::array()))
        out += fmt::format("  {}{}{} (found while it ran)\n", yellow, id.is_string() ? id.get<std::string>() : "?", reset);
      if (d.value("libraries_loaded", 0) > 0)
        out += fmt::format("  {} CUDA libraries loaded while it ran\n", d.value("libraries_loaded", 0));
      if (d["cut"].is_string()) out += fmt::format("  {}cut:{} {}\n", yellow, reset, d["cut"].get<std::string>());
      out += fmt::format("  stream: {}\n", r.path);
      continue;
    }
    const auto& proc = d.value("process", nlohmann::json::object());
    std::string rank = proc.contains("rank") && proc["rank"].is_number() ? fmt::format(" rank {}", proc["rank"].get<int>()) : "";
    out += fmt::format("{}process {}{}{}: {}\n", bold, proc.value("pid", 0), rank, reset, proc.value("exe", "?"));
    const auto& drv = d.value("driver", nlohmann::json::object());
    const auto& api = d.value("api", nlohmann::json::object());
    // No driver: the program asked for libcuda and none is loaded.
    if (drv.value("libcuda_dlopen_requests", 0) > 0 && drv.contains("libcuda_loaded") && drv["libcuda_loaded"].is_null())
      out += fmt::format("  {}no CUDA driver:{} the program asked for libcuda.so.1 and none is installed on this machine\n",
                         yellow, reset);
    if (api.contains("cuInit") && api["cuInit"].value("errors", 0) > 0)
      out += fmt::format("  {}cuInit failed:{} {} (no usable CUDA device or driver)\n", yellow, reset,
                         cu_error_name(api["cuInit"].value("last_error", 0)));
    uint64_t calls = 0, errors = 0;
    std::vector<std::pair<uint64_t, std::string>> blocked;
    for (const auto& [name, row] : api.items()) {
      calls += row.value("calls", 0ull);
      errors += row.value("errors", 0ull);
      if (row.contains("blocked_ns") && row["blocked_ns"].get<uint64_t>() > 0)
        blocked.emplace_back(row["blocked_ns"].get<uint64_t>(), name);
    }
    const auto& blk = d.value("blocking", nlohmann::json::object());
    const uint64_t wall = blk.value("wall_ns", 0ull), bns = blk.value("blocked_ns", 0ull);
    out += fmt::format("  {} hooked calls ({} failed) across {} APIs; blocked {} of {} wall ({:.1f}%)\n", calls, errors,
                       api.size(), human_ns(bns), human_ns(wall), wall ? 100.0 * bns / wall : 0.0);
    std::sort(blocked.rbegin(), blocked.rend());
    for (size_t i = 0; i < blocked.size() && i < 5; ++i)
      out += fmt::format("    {:>10}  {} ({} calls)\n", human_ns(blocked[i].first), blocked[i].second,
                         api[blocked[i].second].value("calls", 0ull));
    const auto& findings = d.value("findings", nlohmann::json::array());
    for (const auto& f : findings) {
      if (!f.is_object()) continue;
      const auto& sites = f.value("sites", nlohmann::json::array());
      out += fmt::format("  {}{:<26}{} {:>8} calls {:>10} blocked  at {}\n", f.value("severity", "") == "info" ? "" : yellow,
                         f.value("id", "?"), reset, f.value("count", 0ull), human_ns(f.value("blocked_ns", 0ull)),
                         sites.empty() || !sites[0].is_object() ? std::string("(process-wide)") : site_where(sites[0]));
    }
    // What is wrong with the libraries, driver and device code the process loaded.
    for (const auto& f : d.value("library_findings", nlohmann::json::array())) {
      if (!f.is_object()) continue;
      out += fmt::format("  {}{:<26}{} {}: {}\n", f.value("severity", "") == "info" ? "" : yellow, f.value("id", "?"), reset,
                         f.value("severity", "?"), f.value("message", ""));
    }
    const auto& mem = d.value("memory", nlohmann::json::object());
    for (const auto& dev : mem.value("devices", nlohmann::json::array()))
      out += fmt::format("  device {}: peak {} , live at exit {}\n", dev.value("device", 0),
                         human_bytes(dev.value("peak_bytes", 0ull)), human_bytes(dev.value("live_bytes", 0ull)));
    // PyTorch's own counters against what the process holds (the torch_memory section).
    const auto& tm = d.value("torch_memory", nlohmann::json::object());
    for (const auto& snap : tm.value("snapshots", nlohmann::json::array()))
      for (const auto& t : snap.value("devices", nlohmann::json::array())) {
        const int64_t outside = t.value("outside_torch_bytes", int64_t{0});
        out += fmt::format("  {}torch device {} at {}:{} allocated {} (peak {}) of {} reserved (peak {}), {:.0f}% "
                           "reserved but unallocated; the process holds {}{}{}\n",
                           t.value("fragmented", false) ? yellow : "", t.value("device", 0), snap.value("moment", "?"),
                           t.value("fragmented", false) ? reset : "", human_bytes(t.value("allocated_bytes", 0ull)),
                           human_bytes(t.value("allocated_peak_bytes", 0ull)), human_bytes(t.value("reserved_bytes", 0ull)),
                           human_bytes(t.value("reserved_peak_bytes", 0ull)), 100.0 * t.value("fragmentation", 0.0),
                           human_bytes(t.value("process_bytes", 0ull)),
                           outside > 0 ? fmt::format(", {} of it outside torch's allocator", human_bytes(outside)) : "",
                           t.value("alloc_retries", 0ull) > 0
                               ? fmt::format("; {} allocation retries", t.value("alloc_retries", 0ull))
                               : "");
      }
    out += fmt::format("  report: {}\n", r.path);
  }
  return out;
}

nlohmann::json merge_reports(const std::vector<LoadedReport>& reports) {
  nlohmann::json m = {{"schema", "cudashim.merged/1"}, {"processes", nlohmann::json::array()}};
  for (const auto& r : reports) {
    nlohmann::json p = r.doc;
    p["report_path"] = r.path;
    m["processes"].push_back(std::move(p));
  }
  return m;
}

}  // namespace cudashim::tools
