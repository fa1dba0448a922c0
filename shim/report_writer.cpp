// report_writer.cpp: report file names and atomic writes (the rules: recorder/output_files.h).
#include "shim/report_writer.h"

#include "recorder/output_files.h"

namespace cudashim::shim {

std::string default_report_path(const std::string& out_dir, const recorder::ProcessInfo& info) {
  const std::string base = recorder::outputs_claim();
  if (!base.empty()) return base + ".json";
  // Not configured (an inert process): the plain name.
  return (out_dir.empty() ? std::string(".") : out_dir) + "/cudashim-" + (info.host.empty() ? "host" : info.host) + "-" +
         std::to_string(info.pid) + ".json";
}

int write_file_atomically(const std::string& path, const std::string& text) {
  return recorder::write_file_atomically(path, text);
}

}  // namespace cudashim::shim
