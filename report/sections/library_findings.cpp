// library_findings.cpp: the report's "library_findings" section: what is wrong with the
// loaded set of CUDA libraries (ids from symbols/findings.def, as `cudashim doctor`).
#include "report/sections/sections.h"

namespace cudashim::report {

void write_library_findings(JsonWriter& w, const ReportContext& c) {
  auto a = w.array(json_lines(4));
  for (const symbols::Finding& f : c.libraries.findings) {
    auto o = w.object();
    w.member("id", f.info().name);
    w.member("severity", symbols::severity_name(f.info().severity));
    w.member("title", f.info().title);
    w.member("message", f.message);
    w.key("evidence");
    {
      auto ev = w.array();
      for (const std::string& e : f.evidence) w.value(e);
    }
    w.member("fix", f.info().advice);
  }
}

}  // namespace cudashim::report
