// policy/rules/doctor.h: the rules of the doctor domain (rows doctor.* of catalog/findings.def):
// the driver the scanned framework (or CUDA runtime) needs against the driver present (the
// headline's verdict: doctor.driver-too-old, doctor.driver-minor-compat, from
// catalog/cuda_drivers.def), a file that could not be read (doctor.unreadable-file) and an
// assumed GPU architecture (doctor.sm-assumed). The facts come from symbols/ (the frameworks,
// the runtimes' versions); tools/doctor_scan.cpp gathers them and tools/doctor_headline.cpp
// writes the headline's text.
#pragma once
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "symbols/python_frameworks.h"

namespace cudashim::policy {

enum class DriverVerdict {
  ok,            // at least the toolkit driver of that CUDA release
  minor_compat,  // at least the major's minimum: runs under minor-version compatibility
  too_old,       // below the major's minimum: CUDA calls fail (cudaErrorInsufficientDriver)
  no_driver,     // no driver version known (no kernel module, no --driver-version)
  unknown_cuda,  // a CUDA release the table does not know (or none: a CPU build)
  nothing,       // no framework and no CUDA runtime in the scanned set
};

// "ok", "minor-compat", "too-old", "no-driver", "unknown-cuda", "nothing".
const char* verdict_name(DriverVerdict v);

// A CUDA runtime of the scanned set: what the headline checks when no framework says its CUDA.
struct ScannedRuntime {
  std::string path, version;  // version "13.0.96", "12" (major only)
};

struct Headline {
  std::vector<symbols::FrameworkInfo> frameworks;
  std::string subject;        // "torch 2.10.0", "libcudart.so.13 13.0.96"; "" when nothing was found
  std::string cuda;           // the CUDA it was built for: "12.8", "13" ...
  std::string cuda_source;    // "torch/version.py", "the runtime's version (wheel RECORD ...)"
  std::string driver_needed;  // the minor-version-compatibility minimum of that major: "525.60.13"
  std::string driver_full;    // the toolkit driver of that release: "570.26"; "" when not in the table
  std::string driver;         // the driver present: "535.104.05"; "" none
  std::string driver_source;  // "/proc/driver/nvidia/version", "--driver-version"
  DriverVerdict verdict = DriverVerdict::nothing;
};

// The headline for `frameworks` (the first with a CUDA version decides; torch first) or, when none
// says its CUDA, the newest runtime in `runtimes`, against `driver` ("" = none known).
Headline make_headline(std::vector<symbols::FrameworkInfo> frameworks, const std::vector<ScannedRuntime>& runtimes,
                       const std::string& driver, const std::string& driver_source);

// The findings of the verdict: doctor.driver-too-old (error), doctor.driver-minor-compat (info).
std::vector<Finding> headline_findings(const Headline& h);

// -1, 0, 1 as driver release `a` is older, the same, newer than `b` ("580" == "580.0.0").
int compare_driver(const std::string& a, const std::string& b);

// doctor.unreadable-file: `subject` (a path) could not be read; `reason` says why.
Finding unreadable_file(std::string subject, std::string reason);

// doctor.sm-assumed: no GPU answered, so coverage was checked for sm_`sm`.
Finding sm_assumed(int sm);

}  // namespace cudashim::policy
