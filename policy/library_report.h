// library_report.h: the report's view of the CUDA libraries the process loaded.
#pragma once
#include <string>
#include <vector>

namespace cudashim::policy {

// The "libraries" and "library_findings" sections of the report (taken at exit),
// and one log line per finding in `lines`.
std::string libraries_report_json(std::vector<std::string>& lines);

}  // namespace cudashim::policy
