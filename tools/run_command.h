// run_command.h: `cudashim run [options] -- CMD ...`
#pragma once
#include <string>
#include <vector>

namespace cudashim::tools {

struct RunOptions {
  std::string out_dir;  // empty: ./cudashim-runs/<time>-<pid>
  std::string shim;     // empty: next to the executable (../lib/libcudashim.so)
  bool quiet = false;   // no summary at the end
  bool verbose = false; // the summary lists every library and every setting's source
  std::vector<std::string> command;
};

// Runs the command with the shim first in LD_PRELOAD (the user's entries kept),
// CUDASHIM_OUT set, then prints a summary of every process's report (and one line counting the
// processes that made no CUDA call). Returns the
// command's exit code (128+signal when it was killed), or 127 when it cannot start.
int run_command(const RunOptions& opts);

// Returns the path of libcudashim.so for this installation, or "" when not found.
std::string locate_shim();

}  // namespace cudashim::tools
