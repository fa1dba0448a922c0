// policy/rules/toolchain.h: the rules on Triton's CUDA toolchain (rows triton.* in
// catalog/findings.def), from the facts of symbols/triton_toolchain.h: the ptxas Triton runs
// and whether it targets the GPU, the TRITON_* variables it skips without a word, the libcuda
// its launcher cannot find or link.
#pragma once
#include <vector>

#include "catalog/findings.h"
#include "symbols/triton_toolchain.h"

namespace cudashim::policy {

// What Triton will use (symbols::triton_toolchain) and the findings it gives.
struct TritonReport : symbols::TritonToolchain {
  std::vector<Finding> findings;
};

// The findings for one Triton install: triton.ptxas-missing, triton.ptxas-unsupported-sm,
// triton.env-path-bad, triton.libcuda-not-found, and a triton.toolchain summary. The report
// points into `input`, which must outlive it.
TritonReport triton_findings(const symbols::TritonInput& input);

}  // namespace cudashim::policy
