// doctor_headline.h: the first thing doctor says, as `python -m torch.utils.collect_env` would:
// the framework found, the CUDA it was built for, the driver that CUDA needs
// (catalog/cuda_drivers.def) and the driver present, with a verdict (policy/rules/doctor.h decides it).
#pragma once
#include <string>
#include <vector>

#include "policy/rules/doctor.h"
#include "symbols/python_frameworks.h"

namespace cudashim::tools {

// The frameworks live in symbols/ (the shim's report reads their versions too).
using symbols::FrameworkInfo;
using symbols::find_frameworks;
using symbols::pinned_requirement;


// The headline's verdict is a rule (policy/rules/doctor.h); this file writes its text.
using policy::compare_driver;
using policy::DriverVerdict;
using policy::Headline;
using policy::headline_findings;
using policy::make_headline;
using policy::ScannedRuntime;
using policy::verdict_name;

// The headline as text lines, each ending in '\n'.
std::string headline_text(const Headline& h);

}  // namespace cudashim::tools
