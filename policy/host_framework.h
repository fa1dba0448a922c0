// host_framework.h: whose sync it is when the user's line reaches it through installed code.
//
// torch, jax, cupy and numpy are array libraries the user calls directly: a sync reached through
// them from the user's innermost frame is the user's (loss.item(), torch.cuda.synchronize(),
// print(tensor) through torch/_tensor_str.py, torch.nonzero, a pageable non_blocking .to()).
// A sync whose path from that frame passes through a host framework (transformers' Trainer,
// Lightning, Accelerate, DeepSpeed: the host rows of catalog/python_packages.def) happens in that
// framework's own loop: the user cannot remove it from their line. It is info, grouped per
// framework, "reached from your line", with the framework's row's fix (docs/findings.md, "Whose
// sync it is"). Any other installed package is a helper the user's line calls (a metrics
// package, a logging utility, a team's own installed library): its sync is the user's, found
// at the user's line with the helper's function named beside it.
#pragma once
#include <string>

#include "recorder/callsites.h"

namespace cudashim::policy {

// True when the top-level package `pkg` is an array library (its row's role). No allocation.
bool is_array_library(const char* pkg);

// The index in frames[0..user) (innermost first) of the outermost frame of a host framework
// between the sync and the user's innermost frame `user`; -1 when that path passes through
// array libraries and the standard library only, or when user <= 0. No allocation, no lock.
int host_frame_in(const recorder::PyFrameText* frames, int user);

// True when the top-level package `pkg` is a host framework (its row's role). No allocation.
bool is_host_framework(const char* pkg);

// The index in frames[0..user) of the innermost frame of a helper package (installed, neither
// an array library nor a host framework) between the sync and the user's innermost frame
// `user`: the helper function that made the call; -1 when none. No allocation, no lock.
int helper_frame_in(const recorder::PyFrameText* frames, int user);

// A site's helper frame (helper_frame_in over its kept frames), -1 when its path passes
// through a host framework or no helper.
int helper_frame(const recorder::CallSite& s);

// The host framework a site's path passes through ("transformers"); "" when none does (the
// site is the user's own, or entirely a framework's: policy::site_framework tells those).
std::string host_framework(const recorder::CallSite& s);

// What a finding at a framework's sites says to do: the framework's row's fix where it has
// one, else sync.inside-framework's ("nothing to do in your code").
const char* framework_fix(const std::string& framework);

}  // namespace cudashim::policy
