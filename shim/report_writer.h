// report_writer.h: where the per-process report goes, and writing it safely.
#pragma once
#include <string>

#include "recorder/recorder.h"

namespace cudashim::shim {

// Returns the default report path: <base>.json, the process's claimed base
// (recorder/output_files.h: <out_dir>/cudashim-<host>-<pid>[-r<rank>], plus -t<start ms>
// when an earlier process left outputs under that name). `out_dir` and `info` name it only
// where the outputs were never configured (an inert process).
std::string default_report_path(const std::string& out_dir, const recorder::ProcessInfo& info);

// recorder::write_file_atomically: whole or not at all, never over anything but a regular
// file this process put there. Returns 0 or a negative errno (-EEXIST: left alone).
int write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cudashim::shim
