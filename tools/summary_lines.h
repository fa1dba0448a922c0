// summary_lines.h: lines of the summary a person reads (issue 33.5), kept out of
// report_reader.cpp's render_summary: the processes of a run that made no CUDA call, counted
// in one line, and the settings that were refused.
//
// Under `cudashim run` each process that ends without a CUDA call appends "<pid>\t<name>"
// to <out>/cudashim-<host>.no-cuda (recorder/no_cuda_record.h). The summary counts them by
// name in one line ("3 processes made no CUDA call: bash (2), python3 (1)") instead of a
// section each.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tools/report_reader.h"

namespace cudashim::tools {

struct NoCudaProcesses {
  uint64_t count = 0;
  std::vector<std::pair<std::string, uint64_t>> by_name;  // most first, then by name
  bool floor = false;  // a file reached its size limit: there were more
  uint64_t quiet_reports = 0;  // of them, processes that left a report with no call (fold_quiet_reports)
};

// Reads the cudashim-*.no-cuda files of each folder of `paths` (and each such file named
// directly), one count per host and pid (the last line of a pid wins), less the processes
// that left a report, a stream or a flight record among `reports` (an image that made a CUDA
// call after an exec). A file that cannot be read adds one line to `problems`.
NoCudaProcesses read_no_cuda(const std::vector<std::string>& paths, const std::vector<LoadedReport>& reports,
                             std::vector<std::string>& problems);

// Moves out of `reports` the report of each process that made no hooked call and has nothing
// else to say (no finding above info, no out-of-memory, nothing live at exit, not a program
// that found no driver; a refused setting is said in the sections of the others): a launcher or an MPI daemon that only loaded
// libcuda. Each is counted into `n` under its program name (the last part of argv[0]). Nothing
// is moved with `verbose`, which gives each its section.
void fold_quiet_reports(std::vector<LoadedReport>& reports, bool verbose, NoCudaProcesses& n);

// "3 processes made no CUDA call: bash (2), python3 (1)\n"; "" when there is none. At most
// six names, then "and K more"; then how many of them left a report (only loaded the driver).
std::string no_cuda_text(const NoCudaProcesses& n);

// The same as JSON, for `cudashim report --json`: {"count", "floor", "by_name": {name: count}}.
nlohmann::json no_cuda_json(const NoCudaProcesses& n);

// One line per refused setting of a report's policy (policy.refused): the setting, the value
// asked for, where it came from, why it was refused and what was kept. "" when none.
// "    refused MANAGED='allow' from CUDASHIM_MANAGED: would loosen it from 'deny' to 'allow' (the
// policy locked by /etc/cudashim/policy.toml:2:10); kept 'deny'\n"
std::string refused_text(const std::vector<RefusedSetting>& refused);

// True when a report's policy is the table's defaults with nothing to say: no cap, managed
// memory allowed, not locked, no setting from a file, nothing refused, no framework variable
// set. The summary leaves its line out then (--verbose prints it).
bool policy_is_default(const PolicyInForce& p);

// The CUDA runtimes of the headline in one phrase when every copy has one version: "13.0 (and 4
// static copies of it, in libcublas.so.13, libcublasLt.so.13, ...)" instead of each copy named
// (torch on the H200: five of them, a line that wrapped over three rows). `listed` (each copy
// named) otherwise.
std::string runtimes_text(const std::vector<LoadedLibrary>& libraries, const std::string& listed);

// One line counting the info findings of a report (runtime and library: below the warning
// floor, or nothing to fix) that the summary leaves out without --verbose: "  3 info findings
// (module.ptx-jit, triton.toolchain, ...: --verbose lists them)\n"; "" when none or verbose.
std::string info_findings_text(const ProcessReport& d, bool verbose);

}  // namespace cudashim::tools
