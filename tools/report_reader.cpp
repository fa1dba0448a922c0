// report_reader.cpp: load and summarize per-process reports.
#include "tools/report_reader.h"

#include <cxxabi.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "catalog/findings.h"
#include "policy/rules/gpu_time.h"
#include "recorder/utf8.h"
#include "symbols/debug_lines.h"
#include "symbols/link_address.h"
#include "symbols/symtab.h"
#include "tools/input_files.h"
#include "tools/summary_lines.h"
#include "tools/text_units.h"

namespace fs = std::filesystem;

namespace cudashim::tools {
namespace {

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
  if (!S_ISREG(st.st_mode)) {  // a report may name a FIFO or a device: opening it could block or never end
    m.error = fmt::format("{} is not a regular file", path);
    return m;
  }
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

// One recorded frame against the file now: {status, text, function, file, line, column, debug_file}.
nlohmann::json resolve_frame(const std::optional<RecordedFrame>& frame) {
  using nlohmann::json;
  json out = {{"status", "unknown"}, {"text", "?"}, {"function", nullptr}, {"file", nullptr},
              {"line", nullptr},     {"column", nullptr}, {"debug_file", nullptr}};
  if (!frame || !frame->file || !frame->address) return out;
  const std::string& path = *frame->file;
  const uint64_t address = *frame->address;
  const std::string base = fs::path(path).filename().string();
  const std::string raw = fmt::format("{}+{:#x}", base, address);
  // A name that was not UTF-8 is recorded with \xNN for each such byte (docs/report-schema.md):
  // the file on disk has the bytes.
  const ModuleNow* now = &module_now(path);
  if (!now->exists && path.find("\\x") != std::string::npos) {
    if (const std::string bytes = utf8_bytes_back(path); bytes != path && module_now(bytes).exists) now = &module_now(bytes);
  }
  const ModuleNow& m = *now;
  auto no_line = [&](const char* status, const std::string& why) {
    out["status"] = status;
    out["text"] = fmt::format("{} ({}; no source line)", raw, why);
    return out;
  };
  if (!m.exists) return no_line("missing", fmt::format("{} is gone since the run", path));
  if (!m.lines) return no_line("unreadable", m.error);
  const std::string& rec_id = frame->build_id;
  if (!rec_id.empty() && rec_id != m.lines->build_id())
    return no_line("changed", fmt::format("{} changed since the run: build-id {} then, {} now", path, rec_id,
                                          m.lines->build_id().empty() ? "none" : m.lines->build_id()));
  if (rec_id.empty() && frame->size != 0 && (frame->size != m.size || frame->mtime_ns != m.mtime_ns))
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

// Every finding of a report read as today's id (read_process_report read an old alias as its
// row: Finding::name()) and its native call sites resolved (where_source, native_source), in
// the model and in the document --json prints. pre: the model was read from `doc` without a
// problem, so each finding and site of the model is the element of the same index in `doc`.
void complete_findings(ProcessReport& r, nlohmann::json& doc) {
  for (auto [section, list] : {std::pair{"findings", &r.findings}, std::pair{"library_findings", &r.library_findings}}) {
    for (size_t i = 0; i < list->size(); ++i) {
      Finding& f = (*list)[i];
      nlohmann::json& jf = doc[section][i];
      if (jf.contains("id")) jf["id"] = f.name();
      if (section != std::string_view("findings")) continue;
      for (size_t k = 0; k < f.recorded.sites.size(); ++k) {
        RecordedSite& site = f.recorded.sites[k];
        nlohmann::json& js = jf["sites"][k];
        if (site.where_frame) {
          nlohmann::json where = resolve_frame(site.where_frame);
          site.where_source = where["text"].get<std::string>();
          js["where_source"] = std::move(where);
        }
        if (site.frames) {
          nlohmann::json texts = nlohmann::json::array();
          for (const auto& fr : *site.frames) {
            texts.push_back(resolve_frame(fr)["text"]);
            site.native_source.push_back(texts.back().get<std::string>());
          }
          js["native_source"] = std::move(texts);
        }
      }
    }
  }
}

// Each frame of a flight record's backtrace resolved against its module file as it is now
// (CrashFrame::source, and "source" in the document --json prints). The record holds file
// offsets (recorder/backtrace.h): the file's PT_LOAD segments give the link-time address.
// pre: the model was read from `doc` without a problem.
void complete_backtrace(CrashRecord& c, nlohmann::json& doc) {
  for (size_t i = 0; i < c.backtrace.size(); ++i) {
    CrashFrame& f = c.backtrace[i];
    std::optional<RecordedFrame> rec;
    if (f.module >= 0 && static_cast<size_t>(f.module) < c.modules.size()) {
      const CrashModule& m = c.modules[static_cast<size_t>(f.module)];
      const ModuleNow& now = module_now(m.path);
      // A file that is gone or unreadable keeps the offset: resolve_frame says what is wrong.
      rec = RecordedFrame{m.path, f.file_offset, "", m.size, m.mtime_ns};
      if (now.exists && now.error.empty()) {
        const auto at = symbols::link_address_of_offset(m.path, f.file_offset);
        rec->address = at ? std::optional<uint64_t>(*at + (f.pc ? 1 : 0)) : std::nullopt;  // +1: resolve_frame looks
      }                                                                                      // one byte before
    }
    nlohmann::json where = resolve_frame(rec);
    if (rec && !rec->address && where["status"] == "unknown")
      where["text"] = fmt::format("{}+{:#x} (no loaded segment of the file holds it)",
                                  fs::path(*rec->file).filename().string(), f.file_offset);
    if (!rec) where["text"] = fmt::format("{:#x} (in no file)", f.address);
    f.source = where["text"].get<std::string>();
    doc["backtrace"]["frames"][i]["source"] = std::move(where);
  }
}

// A report or a flight record. Returns the problem with it ("" when it was loaded).
std::string add_document(const std::string& path, std::vector<LoadedReport>& out) {
  std::string why;
  auto file = InputFile::open(path, why);
  if (!file) return why + "; skipped";
  const auto text = file->read_all(kMaxDocumentBytes, why);
  if (!text) return why + "; skipped";
  bool too_deep = false;
  auto doc = parse_bounded(*text, why, &too_deep);
  if (too_deep) return fmt::format("nested deeper than {} levels, which no report is; skipped", kMaxJsonDepth);
  if (!doc) return fmt::format("not a JSON report (truncated or corrupt): {}; skipped", why);
  if (!doc->is_object()) return fmt::format("not a JSON report (truncated or corrupt): the document is {}; skipped",
                                            doc->is_array() ? "an array" : "no object");
  Fields fields(*doc);
  const std::string schema = fields.root().get<std::string>("schema", "none");
  if (!fields.ok()) return fields.problem() + "; skipped";
  const char* damaged = "; skipped (the shim never writes that: the file was edited or damaged)";
  if (schema == "cudashim.crash/1") {
    CrashRecord c = read_crash_record(fields);
    if (!fields.ok()) return fields.problem() + damaged;
    complete_backtrace(c, *doc);
    out.push_back({path, std::move(*doc), std::move(c)});
    return "";
  }
  if (schema != "cudashim.report/1")
    return fmt::format("schema '{}' is not cudashim.report/1; skipped", shown(schema));
  ProcessReport r = read_process_report(fields);
  if (!fields.ok()) return fields.problem() + damaged;
  complete_findings(r, *doc);
  out.push_back({path, std::move(*doc), std::move(r)});
  return "";
}

// A process's event stream (cudashim-*.ndjson), for a process that left no report (killed
// with SIGKILL, or still running): what it said up to its last complete line. Returns
// the problem with it ("" when none).
std::string add_stream(const std::string& path, std::vector<LoadedReport>& out) {
  StreamSummary s;
  nlohmann::json doc;
  const std::string problem = read_stream(path, s, &doc, nullptr);
  // Nothing read: an empty stream or a damaged first line is skipped; a first line cut short
  // (a process killed in its first write) is still shown, as a stream that stops there.
  if (s.lines == 0 && (!s.cut || !problem.empty())) return problem.empty() ? "an empty event stream; skipped" : problem;
  out.push_back({path, std::move(doc), std::move(s)});
  return problem;
}

bool is_stream(const std::string& path) { return fs::path(path).extension() == ".ndjson"; }

std::string stream_sibling(const std::string& path) { return fs::path(path).replace_extension(".json").string(); }

// Text from a file, as the terminal gets it: no escape sequence of a report reaches it.
std::string t(const std::string& s) { return shown(s); }

std::string site_text(const MemorySite& m) {
  return fmt::format("{}{}", m.where ? t(*m.where) : std::string("(call sites off)"),
                     m.api ? fmt::format(" ({})", t(*m.api)) : std::string());
}

// What ran, where, with what: the command line, host, cudashim and the CUDA stack (the static
// copies of one runtime version in one phrase without --verbose: runtimes_text).
std::string run_metadata(const ProcessReport& d, bool verbose) {
  std::string cmd;
  for (const std::string& a : d.argv) cmd += (cmd.empty() ? "" : " ") + t(a);
  std::string out = fmt::format("  command: {}\n", cmd.empty() ? "?" : cmd);
  std::string runtimes;
  for (const LoadedLibrary& l : d.libraries)
    if (l.family == "cudart")
      // A static copy is named by the library it is linked into: "13.0 (static), 13.0 (static)" said
      // nothing of where (cuBLAS and cuBLASLt carry their own on the H200's torch).
      runtimes += fmt::format("{}{}{}", runtimes.empty() ? "" : ", ", l.version.empty() ? "?" : t(l.version),
                              l.linkage == "static" ? fmt::format(" (static, in {})", t(l.file.substr(l.file.rfind('/') + 1)))
                                                    : std::string());
  std::string driver = d.libcuda_loaded ? t(*d.libcuda_loaded) : std::string("not loaded");
  if (d.kernel_module) driver = t(*d.kernel_module) + (d.libcuda_loaded ? "" : " (libcuda not loaded)");
  if (d.driver_cuda_version > 0) driver += fmt::format(" (CUDA {})", cuda_version_text(d.driver_cuda_version));
  if (!verbose) runtimes = runtimes_text(d.libraries, runtimes);
  out += fmt::format("  host {}, cudashim {}, driver {}, CUDA runtime {}\n", t(d.host), t(d.cudashim_version), driver,
                     runtimes.empty() ? "none loaded" : runtimes);
  std::string gpus, frameworks;
  for (const GpuName& g : d.gpus)
    gpus += fmt::format("{}{} {}{}", gpus.empty() ? "" : ", ", g.device, g.name.empty() ? "?" : t(g.name),
                        g.compute_capability.empty() ? "" : fmt::format(" (sm {})", t(g.compute_capability)));
  for (const FrameworkVersion& f : d.frameworks)
    frameworks += fmt::format("{}{} {}{}", frameworks.empty() ? "" : ", ", t(f.name), f.version.empty() ? "?" : t(f.version),
                              f.cuda.empty() ? "" : fmt::format(" (built for CUDA {})", t(f.cuda)));
  if (!gpus.empty() || !frameworks.empty())
    out += fmt::format("  GPUs {}; {}\n", gpus.empty() ? "not named" : gpus, frameworks.empty() ? "no framework loaded" : frameworks);
  return out;
}

// Out-of-memory answers: how many, who refused, and the first one's context.
std::string oom_text(const OomEvents& o, const char* yellow, const char* reset) {
  if (o.count == 0) return "";
  std::string out = fmt::format("  {}out of memory:{} {} allocation{} got CUDA_ERROR_OUT_OF_MEMORY, {} of them denied by "
                                "cudashim's policy\n", yellow, reset, o.count, o.count == 1 ? "" : "s", o.denied_by_policy);
  if (!o.has_context) return out;
  out += fmt::format("    the first: {} of {} on device {} ({}{})\n", t(o.api), human_bytes(o.requested_bytes), o.device,
                     t(o.reason), o.context_denied_by_policy ? ", denied by the policy" : "");
  for (const OomDevice& dev : o.devices)
    out += fmt::format("    device {} then: {} in use{}{}, largest block {} ({})\n", dev.device,
                       human_bytes(dev.in_use_bytes),
                       dev.cap_bytes ? fmt::format(" of a {} cap", human_bytes(dev.cap_bytes)) : std::string(),
                       dev.cached_bytes ? fmt::format(", {} cached in the pool", human_bytes(dev.cached_bytes)) : "",
                       human_bytes(dev.largest_block_bytes), t(dev.largest_block_basis));
  for (const MemorySite& m : o.top_sites)
    out += fmt::format("    {:>10} in {} allocation{} at {}\n", human_bytes(m.bytes), m.count, m.count == 1 ? "" : "s",
                       site_text(m));
  return out;
}

// Allocations still live at exit, by the call site that made them (the sites with --verbose:
// a framework's caching allocator keeps its whole cache live at exit, a screen of sites).
std::string leaks_text(const ProcessReport& d, bool verbose) {
  if (d.leaked_allocations == 0) return "";
  std::string out = fmt::format("  live at exit: {} in {} allocations{}\n", human_bytes(d.leaked_bytes), d.leaked_allocations,
                                verbose || d.leaks.empty() ? "" : " (by site: --verbose, or the report)");
  if (!verbose) return out;
  for (const MemorySite& m : d.leaks)
    out += fmt::format("    {:>10} in {} {} allocation{} at {}, the oldest {} old\n", human_bytes(m.bytes), m.count,
                       t(m.kind), m.count == 1 ? "" : "s", site_text(m), human_ns(m.oldest_age_ns));
  return out;
}

// The CUDA-family libraries: which file, loaded by whom, and why that file. One line when they
// agree (no library finding above info, one runtime version): the list is in the report and
// behind --verbose.
std::string libraries_text(const ProcessReport& d, bool verbose) {
  if (d.libraries.empty()) return "";
  std::set<std::string> runtimes;
  for (const LoadedLibrary& l : d.libraries)
    if (l.family == "cudart" && !l.version.empty()) runtimes.insert(l.version);
  const bool warned = std::any_of(d.library_findings.begin(), d.library_findings.end(),
                                  [](const Finding& f) { return f.severity() != Severity::info; });
  if (!verbose && !warned && runtimes.size() <= 1)
    return fmt::format("  libraries: {} CUDA librar{}, {}, consistent (the list: --verbose, or the report)\n",
                       d.libraries.size(), d.libraries.size() == 1 ? "y" : "ies",
                       runtimes.empty() ? std::string("no runtime seen") : "one runtime " + t(*runtimes.begin()));
  std::string out = "  libraries:\n";
  for (const LoadedLibrary& l : d.libraries) {
    std::string how = l.how.empty() ? "loaded before cudashim saw why" : t(l.how);
    if (!l.loaded_by.empty()) how += " by " + t(fs::path(l.loaded_by).filename().string());
    out += fmt::format("    {} {} {}: {}{}\n", t(l.family), l.version.empty() ? "?" : t(l.version), t(l.file), how,
                       l.reason.empty() ? std::string() : fmt::format("; {}", t(l.reason)));
  }
  return out;
}

// The allocator policy in force, and what it set.
std::string policy_text(const PolicyInForce& p, bool verbose) {
  if (!p.present || (!verbose && policy_is_default(p))) return "";  // the defaults say nothing
  std::string out = fmt::format("  policy: memory cap {}", p.mem_cap ? t(*p.mem_cap) : std::string("none"));
  if (p.cap_bytes_device0) out += fmt::format(" ({} on device 0)", human_bytes(p.cap_bytes_device0));
  out += fmt::format(", managed memory {}{}\n", t(p.managed), p.locked ? ", locked by the administrator" : "");
  // Where a setting came from only when a policy file set it (the environment's are the job's own
  // choice, named by --verbose).
  for (const auto& [name, where] : p.sources)
    if (verbose || where.rfind("CUDASHIM_", 0) != 0) out += fmt::format("    {} from {}\n", t(name), t(where));
  out += refused_text(p.refused);  // and each value refused, wherever it came from
  for (const AppliedSetting& a : p.applied_env)
    out += fmt::format("    set {}={}{}\n", t(a.name), t(a.value), a.forced ? " (replacing the job's value)" : "");
  return out;
}

// The GPU's side (the gpu_time section): each sampled device's idle share of the steady state
// and its diagnosis, then gpu.idle and gpu.clocks-throttled. Nothing for a report without
// samples (sampling off or unavailable, or a report from before the section).
std::string gpu_time_text(const GpuTime& g, const char* yellow, const char* reset) {
  std::string out;
  for (const GpuTimeDevice& d : g.devices) {
    if (!d.steady_idle && !d.precise_steady_idle) continue;
    const std::string process =
        d.process_steady_idle ? fmt::format("; this process's kernels: idle {:.0f}%", 100 * *d.process_steady_idle) : "";
    const std::string diagnosis = d.diagnosis.empty() || d.diagnosis == "unknown" ? "" : fmt::format(", {}", t(d.diagnosis));
    if (d.precise_steady_idle)  // the GPU's own timestamps; NVML's figure beside them
      out += fmt::format("  GPU {}: idle {:.1f}% of the steady state (CUPTI's timestamps{}){}\n", d.device,
                         100 * *d.precise_steady_idle,
                         d.steady_idle ? fmt::format("; NVML: {:.0f}%, {} samples", 100 * *d.steady_idle, d.steady_samples) : "",
                         diagnosis);
    else
      out += fmt::format("  GPU {}: idle {}{:.0f}% of the steady state ({} NVML samples{}{}){}\n", d.device,
                         d.idle_lower_bound ? "at least " : "", 100 * *d.steady_idle, d.steady_samples,
                         d.idle_lower_bound ? ", kernels too short for NVML to resolve" : "", process, diagnosis);
    // The split the diagnosis was decided from, as the report has it, and the step's bar.
    if (!d.summary.empty()) out += fmt::format("    {}\n", t(d.summary));
    if (d.split) {
      policy::IdleSplit s;
      s.idle = d.split->idle, s.after_syncs = d.split->after_syncs, s.host_between = d.split->host_between,
      s.unexplained = d.split->unexplained;
      out += fmt::format("    the steady state [{}] #: busy  s: idle after syncs  h: host between launches  ?: unexplained\n",
                         policy::idle_split_bar(s));
    }
  }
  for (const Finding& f : g.findings) {
    const bool info = f.severity() == Severity::info;
    out += fmt::format("  {}{}{}: [{}] device {}: {}{}\n    fix: {}\n", info ? "" : yellow, severity_name(f.severity()),
                       info ? "" : reset, t(f.name()), f.recorded.device, t(f.recorded.title),
                       f.recorded.diagnosis.empty() ? "" : fmt::format(" ({})", t(f.recorded.diagnosis)), t(f.fix()));
  }
  return out;
}

// cudashim's own pool, when it was on.
std::string pool_text(const PoolStats& p) {
  if (!p.enabled) return "";
  std::string out = fmt::format("  pool: on, at most {} cached per device\n", human_bytes(p.max_cached_bytes));
  for (const PoolDevice& dev : p.devices)
    out += fmt::format("    device {}: {} hits, {} misses, {} bypassed, {} trims; {} cached at exit (peak {})\n",
                       dev.device, dev.hits, dev.misses, dev.bypassed, dev.trims, human_bytes(dev.cached_bytes),
                       human_bytes(dev.peak_cached_bytes));
  return out;
}

}  // namespace

namespace {

// What one line of a stream adds to its summary; `raw` is the line's JSON, moved into
// `last_counters` or `signal` (when given) for a counters or a signal line.
void take_event(const StreamEvent& e, nlohmann::json& raw, StreamSummary& s, std::vector<StreamCounters>* samples,
                std::vector<GpuHealthPoint>* health, nlohmann::json* last_counters, nlohmann::json* signal) {
  if (e.t_ns) s.last_t_ns = *e.t_ns;
  if (e.type == "start") s.pid = e.pid;
  if (e.counters) {
    s.last_counters = e.counters;
    if (samples) samples->push_back(*e.counters);
    if (last_counters) *last_counters = std::move(raw);
  }
  if (health && e.health) health->push_back(*e.health);
  if (e.type == "exit") {
    s.ended = true;
  } else if (e.type == "finding") {
    if (s.findings.size() < kMaxStreamFindings) s.findings.push_back(current_finding_id(e.id));
    else ++s.findings_left_out;
  } else if (e.type == "library_load") {
    ++s.libraries_loaded;
  } else if (e.type == "signal") {
    s.signal = e.signal;
    if (signal) *signal = std::move(raw);
  }
}

}  // namespace

std::string read_stream(const std::string& path, StreamSummary& s, nlohmann::json* doc,
                        std::vector<StreamCounters>* samples, std::vector<GpuHealthPoint>* health) {
  s = StreamSummary{};
  nlohmann::json last_counters, signal;
  std::string problem;
  auto fill_doc = [&] {
    if (!doc) return;
    nlohmann::json findings = nlohmann::json::array();
    for (const auto& id : s.findings) findings.push_back(id);
    *doc = {{"schema", "cudashim.stream-summary/1"}, {"pid", s.pid}, {"lines", s.lines}, {"ended", s.ended},
            {"last_t_ns", s.last_t_ns}, {"last_counters", std::move(last_counters)}, {"findings", std::move(findings)},
            {"libraries_loaded", s.libraries_loaded}, {"signal", std::move(signal)},
            {"cut", s.cut ? nlohmann::json(*s.cut) : nlohmann::json()}};
    if (s.findings_left_out > 0) (*doc)["findings_left_out"] = s.findings_left_out;
  };
  std::string why;
  auto file = InputFile::open(path, why);
  if (!file) {
    fill_doc();
    return why + "; skipped";
  }
  std::string line;
  for (uint64_t line_no = 1;; ++line_no) {
    const InputFile::Line got = file->next_line(line, kMaxLineBytes);
    if (got == InputFile::Line::end) break;
    const auto rest = [&] {
      const uint64_t after = file->size() - std::min(file->size(), file->offset());
      return after ? fmt::format(", nor the {} bytes after it", after) : std::string();
    };
    // Each way a line can fail: what is cut, and whether it is damage (a problem) or only a
    // write cut short by the process's end (the last line, with no newline).
    auto stop = [&](const std::string& what, bool damage) {
      s.cut = what;
      if (damage)
        problem = s.lines == 0   ? fmt::format("{}; skipped", what)
                  : s.lines == 1 ? fmt::format("{}; the line before it is summarized", what)
                                 : fmt::format("{}; the {} lines before it are summarized", what, s.lines);
    };
    if (got == InputFile::Line::incomplete) {
      stop(fmt::format("line {} is incomplete ({} bytes) and was not read", line_no, line.size()), false);
      break;
    }
    if (got == InputFile::Line::too_long) {
      stop(fmt::format("line {} is longer than the {} MiB a line can be and was not read, nor the {} bytes from its start",
                       line_no, kMaxLineBytes >> 20, file->size() - std::min(file->size(), file->offset())),
           true);
      break;
    }
    if (got == InputFile::Line::error) {
      stop(fmt::format("line {} {}", line_no, line), true);
      break;
    }
    bool too_deep = false;
    auto ev = parse_bounded(line, why, &too_deep);
    if (!ev || !ev->is_object()) {
      stop(fmt::format("line {} is {} ({} bytes) and was not read{}", line_no,
                       too_deep ? fmt::format("nested deeper than {} levels", kMaxJsonDepth)
                       : ev     ? std::string("not a JSON object")
                                : std::string("not JSON"),
                       line.size(), rest()),
           true);
      break;
    }
    Fields fields(*ev);
    const StreamEvent e = read_stream_event(fields);
    if (!fields.ok()) {
      stop(fmt::format("line {} is not as the shim writes it ({}) and was not read{}", line_no, fields.problem(), rest()),
           true);
      break;
    }
    s.lines = line_no;
    take_event(e, *ev, s, samples, health, doc ? &last_counters : nullptr, doc ? &signal : nullptr);
  }
  fill_doc();
  return problem;
}

std::vector<LoadedReport> load_reports(const std::vector<std::string>& paths, std::vector<std::string>& problems) {
  std::vector<LoadedReport> out;
  auto add = [&](const std::string& f) {
    const std::string problem = is_stream(f) ? add_stream(f, out) : add_document(f, out);
    if (!problem.empty()) problems.push_back(fmt::format("{}: {}", shown(f), problem));
  };
  for (const std::string& s : paths) {
    std::error_code ec;
    if (fs::is_directory(s, ec)) {
      // A stream is read for a process whose report is missing or could not be read; its
      // report sorts just before it (cudashim-X.json < cudashim-X.ndjson).
      std::set<std::string> loaded;
      for (const std::string& f : run_folder_files(s, problems)) {
        if (is_stream(f) && loaded.count(stream_sibling(f))) continue;
        const size_t before = out.size();
        add(f);
        if (out.size() > before) loaded.insert(f);
      }
    } else if (fs::exists(s, ec) || fs::is_symlink(fs::symlink_status(s, ec))) {
      add(s);
    } else {
      problems.push_back(fmt::format("{}: no such file or folder", shown(s)));
    }
  }
  return out;
}

namespace {

// The terminal's escape sequences of a summary, or none.
struct Colors {
  const char* bold;
  const char* yellow;
  const char* reset;
};

// A flight record: what happened, each thread's last calls, the backtrace.
std::string crash_text(const CrashRecord& c, const std::string& path, const Colors& k) {
  std::string out = fmt::format("{}CRASH{} process {}: ", k.bold, k.reset, c.pid);
  if (c.reason == "signal")
    out += fmt::format("{} at {}\n", t(c.signal_name), t(c.fault_address));
  else
    out += fmt::format("{} returned {} ({})\n", t(c.api), cu_error_name(c.result), c.result);
  for (const CrashThread& th : c.threads) {
    std::string calls;
    const auto& lc = th.last_calls;
    for (size_t i = lc.size() > 6 ? lc.size() - 6 : 0; i < lc.size(); ++i)
      calls += fmt::format("{}{}{}", calls.empty() ? "" : ", ", t(lc[i].api),
                           lc[i].result ? fmt::format(" -> {}", lc[i].result) : "");
    out += fmt::format("  thread {}: {} calls; last: {}\n", th.tid, th.calls, calls);
  }
  if (!c.backtrace.empty()) {
    out += fmt::format("  backtrace of the {} thread:\n", c.backtrace_source == "signal_frame" ? "faulting" : "writing");
    for (size_t i = 0; i < c.backtrace.size() && i < 16; ++i)
      out += fmt::format("    #{:<2} {}\n", i, t(c.backtrace[i].source.value_or("?")));
    if (c.backtrace.size() > 16) out += fmt::format("    ... {} more frames (--json has them)\n", c.backtrace.size() - 16);
  }
  out += fmt::format("  record: {}\n", t(path));
  return out;
}

// A process with no report: what its event stream said. `crashed`: the pids that left a
// flight record, and what ended them.
std::string stream_text(const StreamSummary& s, const std::string& path, const std::map<int64_t, std::string>& crashed,
                        const Colors& k) {
  std::string out = fmt::format("{}process {}{}: no report; its event stream ", k.bold, s.pid, k.reset);
  const double secs = s.last_t_ns / 1e9;
  // A `signal` line: the shim saw that signal end the process and began its outputs.
  const std::string by = s.signal.empty() ? "" : fmt::format(" after a {} line", t(s.signal));
  if (s.ended)
    out += fmt::format("ends with its exit line at {:.1f} s{}\n", secs, by);
  else if (const auto crash = crashed.find(s.pid); crash != crashed.end())
    out += fmt::format("stops at {:.1f} s: the process crashed ({}; its flight record is shown above)\n", secs,
                       t(crash->second));
  else if (!s.signal.empty())
    out += fmt::format("stops at {:.1f} s{}: {} ended the process before its report was written\n", secs, by,
                       t(s.signal));
  else
    out += fmt::format("stops at {:.1f} s without an exit line: the process was killed (SIGKILL) or is still "
                       "running\n", secs);
  if (const auto& c = s.last_counters) {
    out += fmt::format("  {} hooked calls ({} failed), blocked {}, as of {:.1f} s\n", c->calls, c->errors,
                       human_ns(c->blocked_ns), c->t_ns / 1e9);
    for (const DeviceMemory& dev : c->devices)
      out += fmt::format("  device {}: live {}, peak {}\n", dev.device, human_bytes(dev.live_bytes),
                         human_bytes(dev.peak_bytes));
  }
  for (const std::string& id : s.findings) out += fmt::format("  {}{}{} (found while it ran)\n", k.yellow, t(id), k.reset);
  if (s.findings_left_out > 0) out += fmt::format("  and {} more finding lines\n", s.findings_left_out);
  if (s.libraries_loaded > 0) out += fmt::format("  {} CUDA libraries loaded while it ran\n", s.libraries_loaded);
  if (s.cut) out += fmt::format("  {}cut:{} {}\n", k.yellow, k.reset, t(*s.cut));
  out += fmt::format("  stream: {}\n", t(path));
  return out;
}

// The process line, what ran where (run_metadata), and a missing driver.
std::string process_header_text(const ProcessReport& d, bool verbose, const Colors& k) {
  const std::string rank = d.rank ? fmt::format(" rank {}", *d.rank) : "";
  std::string out = fmt::format("{}process {}{}{}: {}\n", k.bold, d.pid, rank, k.reset, t(d.exe));
  out += run_metadata(d, verbose);
  // No driver: the program asked for libcuda and none is loaded.
  if (d.libcuda_dlopen_requests > 0 && d.libcuda_loaded_null)
    out += fmt::format("  {}no CUDA driver:{} the program asked for libcuda.so.1 and none is installed on this machine\n",
                       k.yellow, k.reset);
  return out;
}

// The hooked calls: a failed cuInit, the totals and the blocked share, cudashim's own cost, and
// the APIs that blocked longest (three, five with --verbose).
std::string calls_text(const ProcessReport& d, bool verbose, const Colors& k) {
  std::string out;
  uint64_t calls = 0, errors = 0;
  std::vector<std::pair<uint64_t, std::string>> blocked;
  std::map<std::string, uint64_t> calls_of;
  for (const ApiRow& row : d.api) {
    if (row.name == "cuInit" && row.errors > 0)
      out += fmt::format("  {}cuInit failed:{} {} (no usable CUDA device or driver)\n", k.yellow, k.reset,
                         cu_error_name(row.last_error));
    calls += row.calls;
    errors += row.errors;
    calls_of[row.name] = row.calls;
    if (row.blocked_ns > 0) blocked.emplace_back(row.blocked_ns, row.name);
  }
  out += fmt::format("  {} hooked calls ({} failed) across {} APIs; blocked {} of {} wall ({:.1f}%)\n", calls, errors,
                     d.api.size(), human_ns(d.blocked_ns), human_ns(d.wall_ns),
                     d.wall_ns ? 100.0 * d.blocked_ns / d.wall_ns : 0.0);
  // What cudashim itself cost this process (issue 33.4): its threads' CPU time and its hooks' estimate.
  if (d.self_cost)
    out += fmt::format("  cudashim used {:.2f}% of the run ({} CPU in its threads + about {} in its hooks; {:.1f}% of the "
                       "process's CPU time{})\n",
                       d.self_cost->share_of_wall_pct, human_ns(d.self_cost->threads_cpu_ns),
                       human_ns(d.self_cost->hooks_ns_estimate), d.self_cost->share_of_cpu_pct,
                       d.self_cost->steady_share_of_wall_pct
                           ? fmt::format("; {:.2f}% once started", *d.self_cost->steady_share_of_wall_pct)
                           : std::string());
  std::sort(blocked.rbegin(), blocked.rend());
  for (size_t i = 0; i < blocked.size() && i < (verbose ? size_t{5} : size_t{3}); ++i)
    out += fmt::format("    {:>10}  {} ({} calls)\n", human_ns(blocked[i].first), t(blocked[i].second),
                       calls_of[blocked[i].second]);
  return out;
}

// Beside the blocked time, the GPU idle the sync left each step until the next launch (reports
// since gpu_idle_after_per_step_ns; nothing for older ones or a site that never drains).
std::string idle_after_text(const Finding& f) {
  const auto& idle = f.recorded.gpu_idle_after_per_step_ns;
  return idle && f.steps ? fmt::format("  ({} blocked + {} GPU idle after, per step)", human_ns(f.blocked_per_step_ns()),
                                       human_ns(*idle))
                         : std::string();
}

// Its price: the step time it would save (reports since predicted_saving_per_step_ns), and the
// other rows' aspects merged into it.
std::string saving_text(const Finding& f) {
  std::string out;
  const auto& saving = f.recorded.predicted_saving_per_step_ns;
  const auto& step = f.recorded.step_ns;
  if (saving && f.steps)
    out = step && *step ? fmt::format("  save {}/step ({:.1f}% of a {} step)", human_ns(*saving), 100.0 * *saving / *step,
                                      human_ns(*step))
                        : fmt::format("  save {}/step", human_ns(*saving));
  for (const std::string& a : f.recorded.also) out += fmt::format(" (also {})", a);
  return out;
}

// Sites of one line are one row (x.to(dev), y.to(dev) on one line are two call sites of the
// interpreter, one line to the user); the report's JSON keeps them apart.
struct SiteLine {
  std::string text;
  uint64_t count = 0, blocked_ns = 0, sites = 0, samples = 0;
};

std::vector<SiteLine> site_lines(const Finding& f) {
  std::vector<SiteLine> lines;
  for (const RecordedSite& s : f.recorded.sites) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const SiteLine& l) { return l.text == s.text(); });
    if (it == lines.end()) it = lines.insert(lines.end(), SiteLine{s.text()});
    it->count += s.count, it->blocked_ns += s.blocked_ns, it->sites++;
    if (s.sampled) it->samples += s.count;
  }
  return lines;
}

std::string sites_of(const SiteLine& l) {
  std::string out = l.sites > 1 ? fmt::format(" ({} call sites on this line)", l.sites) : "";
  // A waiter's site (shim/wait_sampler.h): its calls are another thread's, its count samples.
  if (l.samples)
    out += fmt::format(" (sampled: the main thread seen waiting here {} times while another thread read back; "
                       "blocked time not measured)", l.samples);
  return out;
}

// Every site of each finding (the second one is as much the job's to fix as the first), then
// what is wrong with the libraries, driver and device code the process loaded; without
// --verbose the info ones are counted in one line (info_findings_text).
std::string findings_text(const ProcessReport& d, bool verbose, const Colors& k) {
  std::string out;
  for (const Finding& f : d.findings) {
    if (!verbose && f.severity() == Severity::info) continue;
    const std::vector<SiteLine> lines = site_lines(f);
    out += fmt::format("  {}{:<26}{} {:>8} calls {:>10} blocked  at {}{}{}\n",
                       f.severity() == Severity::info ? "" : k.yellow, t(f.name()), k.reset, f.count,
                       human_ns(f.blocked_ns), lines.empty() ? std::string("(process-wide)") : t(lines[0].text),
                       lines.empty() ? "" : sites_of(lines[0]), idle_after_text(f) + saving_text(f));
    for (size_t i = 1; i < lines.size(); ++i)
      out += fmt::format("  {:<26} {:>8} calls {:>10} blocked  at {}{}\n", "", lines[i].count, human_ns(lines[i].blocked_ns),
                         t(lines[i].text), sites_of(lines[i]));
  }
  for (const Finding& f : d.library_findings)
    if (verbose || f.severity() != Severity::info)
      out += fmt::format("  {}{:<26}{} {}: {}\n", f.severity() == Severity::info ? "" : k.yellow, t(f.name()), k.reset,
                         severity_name(f.severity()), t(f.message));
  return out + info_findings_text(d, verbose);
}

// PyTorch's own counters against what the process holds (the torch_memory section).
std::string torch_text(const ProcessReport& d, const Colors& k) {
  std::string out;
  for (const TorchSnapshot& snap : d.torch)
    for (const TorchDevice& td : snap.devices) {
      out += fmt::format("  {}torch device {} at {}:{} allocated {} (peak {}) of {} reserved (peak {}), {:.0f}% "
                         "reserved but unallocated; the process holds {}{}{}\n",
                         td.fragmented ? k.yellow : "", td.device, t(snap.moment), td.fragmented ? k.reset : "",
                         human_bytes(td.allocated_bytes), human_bytes(td.allocated_peak_bytes),
                         human_bytes(td.reserved_bytes), human_bytes(td.reserved_peak_bytes),
                         100.0 * td.fragmentation, human_bytes(td.process_bytes),
                         td.outside_torch_bytes > 0
                             ? fmt::format(", {} of it outside torch's allocator", human_bytes(td.outside_torch_bytes))
                             : "",
                         td.alloc_retries > 0 ? fmt::format("; {} allocation retries", td.alloc_retries) : "");
    }
  return out;
}

// A per-process report, top to bottom.
std::string process_text(const ProcessReport& d, const std::string& path, bool verbose, const Colors& k) {
  std::string out = process_header_text(d, verbose, k) + calls_text(d, verbose, k) + findings_text(d, verbose, k);
  for (const DeviceMemory& dev : d.devices)
    out += fmt::format("  device {}: peak {}, live at exit {}\n", dev.device, human_bytes(dev.peak_bytes),
                       human_bytes(dev.live_bytes));
  out += oom_text(d.oom, k.yellow, k.reset) + leaks_text(d, verbose) + libraries_text(d, verbose) + policy_text(d.policy, verbose) +
         pool_text(d.pool) + gpu_time_text(d.gpu_time, k.yellow, k.reset);
  out += torch_text(d, k);
  out += fmt::format("  report: {}\n", t(path));
  return out;
}

}  // namespace

std::string render_summary(const std::vector<LoadedReport>& reports, bool color, bool verbose) {
  const Colors k{color ? "\033[1m" : "", color ? "\033[33m" : "", color ? "\033[0m" : ""};
  std::string out;
  // A process that left a flight record crashed: its stream's missing exit line is that
  // crash, not a SIGKILL. (A folder lists <base>-crash.json before <base>.ndjson.)
  std::map<int64_t, std::string> crashed;
  for (const LoadedReport& r : reports)
    if (const auto* c = std::get_if<CrashRecord>(&r.what))
      crashed[c->pid] = c->reason == "signal" ? c->signal_name : fmt::format("{} returned {}", c->api, c->result);
  for (const LoadedReport& r : reports) {
    if (const auto* c = std::get_if<CrashRecord>(&r.what))
      out += crash_text(*c, r.path, k);
    else if (const auto* s = std::get_if<StreamSummary>(&r.what))  // no report: what its event stream said
      out += stream_text(*s, r.path, crashed, k);
    else
      out += process_text(std::get<ProcessReport>(r.what), r.path, verbose, k);
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
