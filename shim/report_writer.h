// report_writer.h: where the per-process report goes, and writing it safely.
#pragma once
#include <string>

#include "recorder/recorder.h"

namespace cudashim::shim {

// Returns the default report path: <out_dir>/cudashim-<host>-<pid>[-r<rank>].json.
std::string default_report_path(const std::string& out_dir, const recorder::ProcessInfo& info);

// Writes `text` to `path` atomically: a temporary file created with O_EXCL,
// O_NOFOLLOW and mode 0600 in the same folder, then renamed. Creates a missing
// folder. Returns 0 or a negative errno.
int write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cudashim::shim
