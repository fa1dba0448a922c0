// gpu_summary.h: the GPU-idle lines of the exit summary, for a person at a terminal: what
// policy/rules/gpu_time.cpp decided (never re-decided here), with a bar whose full width is the
// steady state's step.
#pragma once
#include <string>
#include <vector>

#include "policy/rules/gpu_time.h"

namespace cudashim::report {

// Per device with a gpu.idle finding: its summary line ("GPU 0: idle 63%: 61 points host
// between launches (launch-bound, 480 kernels a step), 2 points after syncs") and the step's
// bar under it. "" when no device has the finding.
std::string gpu_idle_summary_text(const std::vector<policy::GpuDeviceTime>& devices);

}  // namespace cudashim::report
