// library_json.cpp: see library_json.h.
#include "recorder/library_json.h"

namespace cudashim::recorder {

void write_library(JsonWriter& w, const symbols::LoadedLibrary& l) {
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

void write_library_finding(JsonWriter& w, const Finding& f) {
  auto o = w.object();
  w.member("id", f.info().name);
  w.member("severity", severity_name(f.severity()));
  w.member("title", f.info().title);
  w.member("message", f.message);
  w.key("evidence");
  {
    auto ev = w.array();
    for (const std::string& e : f.evidence) w.value(e);
  }
  w.member("fix", f.fix());
}

}  // namespace cudashim::recorder
