// library_findings.cpp: the report's "library_findings" section: what is wrong with the
// loaded set of CUDA libraries (ids from catalog/findings.def, as `cudashim doctor`).
#include "recorder/library_json.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_library_findings(JsonWriter& w, const ReportContext& c) {
  auto a = w.array(json_lines(4));
  for (const Finding& f : c.libraries.findings) recorder::write_library_finding(w, f);
}

}  // namespace cudashim::report
