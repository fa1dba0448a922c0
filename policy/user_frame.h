// user_frame.h: whose code a Python frame is: the user's, the interpreter's standard
// library, or an installed framework (torch, transformers, lightning, jax, ...). A call
// site is the innermost frame of the user's code (shim/python_stack.cpp walks out to it);
// where no frame is the user's, the finding names the framework that owns the site.
//
// Code a framework generates into its own cache folders (TorchInductor's /tmp/torchinductor_<user>/,
// Triton's ~/.triton/cache/) is the framework's too, though no site-packages is in its path.
//
// Decided by path rules, not by sysconfig: reading sysconfig.get_paths() needs the GIL and
// runs Python code (an import) from inside a hook, on a thread that may not hold the GIL
// (PyTorch releases it in nearly every op). CPython's install schemes put the standard
// library in .../lib/pythonX.Y/ and installed packages in .../site-packages/ (Debian:
// .../dist-packages/), in a venv, a conda env and a system Python alike.
#pragma once
#include <cstddef>
#include <string>

#include "recorder/callsites.h"

namespace cudashim::policy {

enum class FrameOwner : unsigned char { unknown = 0, user, stdlib, framework };

// The program, read once at start-up: `argv` of the process (python [options] script.py,
// or python -m package). A program that itself lives under site-packages (an installed
// package run as `python -m pkg` or by its own path) is the user's code, not a framework.
void configure_user_frames(const char* const* argv, int argc);

// Classifies a Python source path (co_filename). Pure, no allocation, no lock: callable
// from a hook's first hit of a code object.
FrameOwner frame_owner(const char* file);

// The top-level package of a file under site-packages or dist-packages ("torch" for
// .../site-packages/torch/nn/modules/module.py; "jax" for the jax_plugins and jaxlib
// folders JAX installs), copied into `out` (at most n-1 chars); "" when the file is not
// under either. Works for native modules (.so paths) too.
void framework_of(const char* file, char* out, size_t n);
std::string framework_of(const char* file);

// The owner of the Python code object `code` whose co_filename is read by `file_of` on
// the first lookup only: later lookups of the same code object are one hash probe in a
// fixed lock-free table (nothing allocated; a full table answers by reading the file again).
// `file_of(code, buf, n)` fills buf with the file name.
using FileOf = void (*)(const void* code, char* buf, size_t n);
FrameOwner code_owner(const void* code, FileOf file_of);

// Copies a Python stack `all[0..n)` (innermost first) into `out[0..max)`: its innermost
// frames, and when the user's innermost frame lies further out than max-1 frames, that
// frame in the last slot, and the outermost host framework's frame between them (policy/host_framework.h),
// else the innermost helper package's frame (the function the finding names), in the slot before (the other frames between are dropped). Returns the frames kept.
int keep_user_frame(const recorder::PyFrameText* all, int n, recorder::PyFrameText* out, int max);

// The index of the user's innermost frame in `frames[0..n)`, or -1 when none is the user's.
int user_frame_in(const recorder::PyFrameText* frames, int n);

// True when a frame of `file` (a path tail) running `function` is compile or autotuning code
// (TorchDynamo's tracing, Inductor's compile and autotuning, AOTAutograd's compile, Triton's
// autotuner and compiler): a sync made under it is a warm-up burst, not a step's
// (docs/findings.md, "Warm-up and compile bursts"). Pure, no allocation.
bool is_warmup_frame(const char* file, const char* function);

// The index of the innermost compile or autotuning frame between the sync (frames[0]) and the
// user's innermost frame (all of frames[0..n) when none is the user's); -1 when there is none.
int warmup_frame_in(const recorder::PyFrameText* frames, int n);

// Forgets the cached owners (tests).
void user_frames_reset();

}  // namespace cudashim::policy
