// html_report.h: `cudashim report --html OUT.html`: one self-contained page (inline
// style, script and SVG; no network, no library) with what ran, the crashes, the findings
// with every site and its stacks, the out-of-memory events, memory over time per process
// and device (from the .ndjson streams next to the reports), leaks, the libraries and why
// each file, the policy, the pool and torch's allocator, and the ranks side by side.
#pragma once
#include <string>
#include <vector>

#include "tools/report_reader.h"

namespace cudashim::tools {

// Renders the page. Streams are looked up next to each report (same name, .ndjson) and
// read as load_reports reads one: a stream that cannot be read, or is damaged, adds one
// line to `problems` (its plot has what was read before the damage).
std::string render_html(const std::vector<LoadedReport>& reports, std::vector<std::string>& problems);

}  // namespace cudashim::tools
