// policy/rules/fatbin.h: the rules on the device code a library file carries (rows fatbin.* in
// catalog/findings.def), from its fatbins as symbols/fatbin.h reads them: no image the GPU can
// run, PTX the driver JIT-compiles, bytes mostly for other GPUs.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "symbols/fatbin.h"

namespace cudashim::policy {

// The coverage of the GPU by the fatbin the CUDA runtime registers for the file at `path`
// (fatbin.no-kernel-image, or fatbin.no-sass with the PTX to JIT-compile). A library that
// embeds fatbins of its own (cuFFT) and has code for the GPU there does not depend on its
// registered one.
void add_fatbin_coverage_findings(const std::string& path, const std::optional<symbols::Coverage>& registered,
                                  const std::optional<symbols::Coverage>& embedded, std::vector<Finding>& out);

// A large library (64 MiB of device code or more) whose device code mostly serves other GPUs:
// how much, and for which (fatbin.mostly-other-archs).
void add_fatbin_size_finding(const std::string& path, const std::optional<symbols::FatbinBytes>& bytes, std::vector<Finding>& out);

// What NVIDIA's and the frameworks' own files carry for other GPUs is no one's to fix: marks
// those findings (fatbin.no-sass, fatbin.mostly-other-archs) of files `in_vendor_package` says
// lie in such a package vendor-internal.
void mark_vendor_fatbin_findings(std::vector<Finding>& findings, const std::function<bool(const std::string&)>& in_vendor_package);

}  // namespace cudashim::policy
