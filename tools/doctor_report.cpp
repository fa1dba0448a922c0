// doctor's two outputs: the human report and the JSON one.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tools/doctor.h"
#include "tools/json_output.h"

namespace cudashim::tools {
using namespace cudashim::symbols;

namespace {

const char* color_of(Severity s) { return s == Severity::error ? "\033[31m" : s == Severity::warning ? "\033[33m" : "\033[36m"; }

std::string resolution_line(const Resolution& r) {
  if (!r.found()) return fmt::format("{} => not found ({} places tried)", r.name, r.tried.size());
  std::string why = reason_name(r.reason);
  if ((r.reason == SearchReason::rpath || r.reason == SearchReason::runpath) && !r.from.empty()) why += " of " + r.from;
  return fmt::format("{} => {} [{}]", r.name, r.path, why);
}

nlohmann::json resolution_json(const Resolution& r) {
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& t : r.tried)
    tried.push_back({{"dir", t.dir}, {"path", t.path}, {"reason", reason_name(t.reason)}, {"from", t.from}, {"outcome", t.outcome}});
  return {{"name", r.name}, {"path", r.path}, {"reason", reason_name(r.reason)}, {"from", r.from}, {"tried", tried}};
}

nlohmann::json headline_json(const Headline& h) {
  nlohmann::json frameworks = nlohmann::json::array();
  for (const auto& f : h.frameworks)
    frameworks.push_back({{"name", f.name},
                          {"version", f.version},
                          {"cuda", f.cuda},
                          {"cuda_source", f.cuda_source},
                          {"site_packages", f.site_packages}});
  return {{"subject", h.subject},         {"cuda", h.cuda},
          {"cuda_source", h.cuda_source}, {"driver_needed", h.driver_needed},
          {"driver_full", h.driver_full}, {"driver", h.driver},
          {"driver_source", h.driver_source}, {"verdict", verdict_name(h.verdict)},
          {"frameworks", frameworks}};
}

}  // namespace

std::string render_doctor_text(const DoctorReport& report, bool color, bool verbose) {
  std::string out = headline_text(report.headline);
  const char* reset = color ? "\033[0m" : "";
  int counts[3] = {0, 0, 0}, hidden = 0;
  for (const auto& f : report.findings) {
    if (f.vendor_internal && !verbose)
      ++hidden;
    else
      ++counts[static_cast<int>(f.severity())];
  }
  out += fmt::format("cudashim doctor: {} files, GPU sm_{} ({}): {} errors, {} warnings, {} notes\n",
                     report.libraries.size(), report.sm, report.sm_source, counts[2], counts[1], counts[0]);
  if (hidden > 0)
    out += fmt::format("({} more notes inside NVIDIA's and the frameworks' own files, nothing to act on: --verbose shows them)\n",
                       hidden);
  for (Severity sev : {Severity::error, Severity::warning, Severity::info}) {
    if (counts[static_cast<int>(sev)] == 0) continue;
    static constexpr const char* kTitles[] = {"NOTES", "WARNINGS", "ERRORS"};
    out += fmt::format("\n{}{}{}\n", color ? color_of(sev) : "", kTitles[static_cast<int>(sev)], reset);
    for (const auto& f : report.findings) {
      if (f.severity() != sev || (f.vendor_internal && !verbose)) continue;
      out += fmt::format("  [{}] {}{}\n", f.info().name, f.message, f.vendor_internal ? " (inside a vendor's own file)" : "");
      for (const auto& e : f.evidence) out += fmt::format("      {}\n", e);
      out += fmt::format("    fix: {}\n", f.fix());
    }
  }
  bool header = false;
  for (const auto& lib : report.libraries) {
    if (!lib.cuda && lib.cuda_needed.empty() && !lib.coverage && !lib.embedded_coverage) continue;
    if (!header) out += "\nLIBRARIES\n";
    header = true;
    std::string what = lib.cuda ? fmt::format("{} {} ({})", lib.cuda->family,
                                              lib.version.version.empty() ? "?" : lib.version.version, lib.version.source)
                                : std::string("uses CUDA");
    out += fmt::format("  {}: {}\n", lib.path, what);
    for (const auto& copy : lib.identical_copies) out += fmt::format("      identical copy: {}\n", copy);
    auto coverage_line = [&](const char* what, const Coverage& c) {
      if (c.containers == 0) {
        out += fmt::format("      {}: no kernels ({} containers, all empty)\n", what, c.containers_empty);
        return;
      }
      out += fmt::format("      {}: {} for sm_{} ({} containers with kernels: {} SASS, {} PTX only, {} neither; {} empty)\n",
                         what, coverage_name(c.kind), c.sm, c.containers, c.containers_sass, c.containers_ptx_only,
                         c.containers_none, c.containers_empty);
    };
    if (lib.coverage) coverage_line("fatbin", *lib.coverage);
    if (lib.embedded_coverage) coverage_line("embedded fatbins", *lib.embedded_coverage);
    if (lib.fatbin_bytes && lib.fatbin_bytes->stored_bytes > 0) {
      const FatbinBytes& b = *lib.fatbin_bytes;
      out += fmt::format("      device code: {:.1f} MiB stored ({:.1f} MiB SASS, {:.1f} MiB PTX), {:.1f} MiB of it used on sm_{} ({}%)\n",
                         b.stored_bytes / 1048576.0, b.sass_stored_bytes / 1048576.0, b.ptx_stored_bytes / 1048576.0,
                         b.used_stored_bytes / 1048576.0, b.sm, b.used_stored_bytes * 100 / b.stored_bytes);
    }
    for (const auto& r : lib.cuda_needed) out += "      " + resolution_line(r) + "\n";
  }
  if (report.findings.empty()) out += "\nno problems found\n";
  return out;
}

namespace {

// A library's fatbin: its coverage for the GPU, the architectures it carries and its bytes.
nlohmann::json fatbin_json(const LibraryReport& lib) {
  const Coverage& c = *lib.coverage;
  nlohmann::json arch_counts = nlohmann::json::object(), embedded = nlohmann::json::object();
  for (const auto& line : lib.fatbin_arch_counts) {
    const auto space = line.rfind(' ');
    const std::string key = line.substr(0, space);
    const int n = std::stoi(line.substr(space + 1));
    if (key.rfind("embedded ", 0) == 0)
      embedded[key.substr(9)] = n;
    else
      arch_counts[key] = n;
  }
  nlohmann::json j = {{"sm", c.sm},
                      {"coverage", coverage_name(c.kind)},
                      {"entries", lib.fatbin_entries},
                      {"containers", c.containers},
                      {"containers_sass", c.containers_sass},
                      {"containers_ptx_only", c.containers_ptx_only},
                      {"containers_none", c.containers_none},
                      {"ptx_jit_bytes", c.ptx_jit_bytes},
                      {"best_sass", c.best_sass},
                      {"best_ptx", c.best_ptx},
                      {"containers_empty", c.containers_empty},
                      {"arch_counts", arch_counts},
                      {"embedded_containers", lib.fatbin_embedded_containers},
                      {"embedded_arch_counts", embedded}};
  if (lib.embedded_coverage) j["embedded_coverage"] = coverage_name(lib.embedded_coverage->kind);
  if (!lib.fatbin_bytes) return j;
  const FatbinBytes& b = *lib.fatbin_bytes;
  nlohmann::json per_arch = nlohmann::json::object();
  for (const auto& a : lib.fatbin_registered_bytes ? lib.fatbin_registered_bytes->archs : b.archs)
    per_arch[a.arch] = {{"entries", a.entries},
                        {"stored_bytes", a.stored_bytes},
                        {"uncompressed_bytes", a.uncompressed_bytes},
                        {"used_entries", a.used_entries},
                        {"used_stored_bytes", a.used_stored_bytes},
                        {"used_uncompressed_bytes", a.used_uncompressed_bytes}};
  j["bytes"] = {{"stored", b.stored_bytes},
                {"uncompressed", b.uncompressed_bytes},
                {"sass_stored", b.sass_stored_bytes},
                {"ptx_stored", b.ptx_stored_bytes},
                {"used_stored", b.used_stored_bytes},
                {"used_uncompressed", b.used_uncompressed_bytes},
                {"registered_stored", lib.fatbin_registered_bytes ? lib.fatbin_registered_bytes->stored_bytes : 0},
                {"per_arch", per_arch}};  // .nv_fatbin only, as cuobjdump lists it
  return j;
}

nlohmann::json library_json(const LibraryReport& lib) {
  nlohmann::json j = {{"path", lib.path}, {"real_path", lib.real_path}, {"soname", lib.soname}, {"identical_copies", lib.identical_copies}};
  if (lib.cuda) {
    j["family"] = lib.cuda->family;
    j["major"] = lib.cuda->major;
    j["version"] = lib.version.version;
    j["version_source"] = lib.version.source;
  }
  nlohmann::json needed = nlohmann::json::array();
  for (const auto& r : lib.cuda_needed) needed.push_back(resolution_json(r));
  j["cuda_needed"] = needed;
  if (lib.coverage) j["fatbin"] = fatbin_json(lib);
  return j;
}

}  // namespace

std::string render_doctor_json(const DoctorReport& report) {
  nlohmann::json findings = nlohmann::json::array();
  int counts[3] = {0, 0, 0}, hidden = 0;
  for (const auto& f : report.findings) {
    ++counts[static_cast<int>(f.severity())];
    hidden += f.vendor_internal ? 1 : 0;
    findings.push_back({{"id", f.info().name},
                        {"severity", severity_name(f.severity())},
                        {"vendor_internal", f.vendor_internal},
                        {"subject", f.subject},
                        {"message", f.message},
                        {"evidence", f.evidence},
                        {"fix", f.fix()}});
  }
  nlohmann::json libs = nlohmann::json::array();
  for (const auto& lib : report.libraries) libs.push_back(library_json(lib));
  nlohmann::json doc = {{"tool", "cudashim doctor"},
                        {"version", 1},
                        {"headline", headline_json(report.headline)},
                        {"sm", report.sm},
                        {"sm_source", report.sm_source},
                        {"summary", {{"errors", counts[2]}, {"warnings", counts[1]}, {"info", counts[0]}, {"vendor_internal", hidden}, {"exit_code", report.exit_code()}}},
                        {"findings", findings},
                        {"libraries", libs}};
  nlohmann::json tritons = nlohmann::json::array();
  for (const auto& t : report.tritons)
    tritons.push_back({{"package", t.package_dir},
                       {"version", t.version},
                       {"ptxas", t.ptxas},
                       {"ptxas_version", t.ptxas_version},
                       {"libcuda_dirs", t.libcuda_dirs},
                       {"libcuda_how", t.libcuda_how}});
  doc["triton"] = tritons;
  doc["driver"] = {{"kernel_module", report.driver.kernel_module},
                   {"open_kernel_module", report.driver.open_module},
                   {"libcuda_in_use", report.driver.libcuda_in_use},
                   {"libcuda_copies", report.driver.libcuda_copies}};
  return dump_utf8(doc, 2) + "\n";  // file and symbol names need not be UTF-8
}

}  // namespace cudashim::tools
