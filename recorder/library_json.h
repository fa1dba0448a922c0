// library_json.h: a loaded CUDA library and a library finding as JSON objects: one shape
// for the event stream's library_load / library_finding lines and the report's
// "libraries" / "library_findings" sections (docs/report-schema.md).
#pragma once
#include "recorder/json_writer.h"
#include "catalog/findings.h"
#include "symbols/loaded_libraries.h"

namespace cudashim::recorder {

// {"path", "file", "family", "version", "version_source", "major", "linkage", "how",
//  "loaded_by", "requested", "reason"}
void write_library(JsonWriter& w, const symbols::LoadedLibrary& l);

// {"id", "severity", "title", "message", "evidence", "fix"}
void write_library_finding(JsonWriter& w, const Finding& f);

}  // namespace cudashim::recorder
