// policy/rules/driver.h: the driver bridge's rules: the host's kernel module against the
// user-mode libcuda a process here loads, NVML against the kernel module, and libcuda copies
// of several releases side by side (rows driver.* in catalog/findings.def). The facts come
// from symbols/driver_bridge.h, gathered live by the shim or from files by the doctor.
#pragma once
#include <vector>

#include "catalog/findings.h"
#include "symbols/driver_bridge.h"

namespace cudashim::policy {

// The findings: kernel module vs the libcuda in use (driver.user-kernel-mismatch, or the
// forward-compatibility verdict driver.forward-compat / driver.compat-unsupported), NVML vs
// kernel module (driver.nvml-mismatch), several libcuda releases side by side
// (driver.libcuda-multiple-copies). Nothing when the kernel module is unknown and one copy is seen.
std::vector<Finding> driver_bridge_findings(const symbols::DriverBridgeInput& input);

}  // namespace cudashim::policy
