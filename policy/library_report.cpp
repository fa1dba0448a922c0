// library_report.cpp: live inventory and its findings, as report sections.
#include "policy/library_report.h"

#include <fmt/format.h>

#include "recorder/json_text.h"

#include "symbols/loaded_libraries.h"

namespace cudashim::policy {
std::string libraries_report_json(std::vector<std::string>& lines) {
  const auto libs = symbols::loaded_cuda_libraries();
  std::string out = "  \"libraries\": [";
  for (size_t i = 0; i < libs.size(); ++i)
    out += fmt::format("{}\n    {{\"path\": {}, \"file\": {}, \"family\": {}, \"version\": {}, \"version_source\": {}, "
                       "\"major\": {}}}",
                       i ? "," : "", json_str(libs[i].path), json_str(libs[i].real), json_str(libs[i].family),
                       json_str(libs[i].version), json_str(libs[i].version_source), libs[i].major);
  out += libs.empty() ? "],\n" : "\n  ],\n";
  out += "  \"library_findings\": [";
  const auto findings = symbols::loaded_library_findings(libs);
  for (size_t i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    std::string ev;
    for (size_t k = 0; k < f.evidence.size(); ++k) ev += (k ? ", " : "") + json_str(f.evidence[k]);
    out += fmt::format("{}\n    {{\"id\": {}, \"severity\": \"{}\", \"title\": {}, \"message\": {}, \"evidence\": [{}], "
                       "\"fix\": {}}}",
                       i ? "," : "", json_str(f.info().name), symbols::severity_name(f.info().severity),
                       json_str(f.info().title), json_str(f.message), ev, json_str(f.info().advice));
    std::string files;
    for (const auto& e : f.evidence) files += (files.empty() ? "" : "; ") + e;
    lines.push_back(fmt::format("[{}] {}: {}; fix: {}", f.info().name, f.message, files, f.info().advice));
  }
  out += findings.empty() ? "],\n" : "\n  ],\n";
  return out;
}

}  // namespace cudashim::policy
