// libraries.cpp: the report's "libraries" section: the CUDA-family libraries loaded at
// exit (policy/library_inventory.h), with how each came in.
#include "recorder/library_json.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_libraries(JsonWriter& w, const ReportContext& c) {
  auto a = w.array(json_lines(4));
  for (const symbols::LoadedLibrary& l : c.libraries.libraries) recorder::write_library(w, l);
}

}  // namespace cudashim::report
