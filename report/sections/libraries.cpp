// libraries.cpp: the report's "libraries" section: the CUDA-family libraries loaded at
// exit (policy/library_watch.h), with how each came in.
#include "report/sections/sections.h"

namespace cudashim::report {

void write_libraries(JsonWriter& w, const ReportContext& c) {
  auto a = w.array(json_lines(4));
  for (const symbols::LoadedLibrary& l : c.libraries.libraries) {
    auto o = w.object();
    w.member("path", l.path);
    w.member("file", l.real);
    w.member("family", l.family);
    w.member("version", l.version);
    w.member("version_source", l.version_source);
    w.member("major", l.major);
    w.member("linkage", l.linkage);
    w.member("how", l.how);
    w.member("loaded_by", l.loaded_by);
    w.member("requested", l.requested);
    w.member("reason", l.reason);
  }
}

}  // namespace cudashim::report
