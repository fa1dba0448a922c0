// no_cuda_record.h: the one line a process that made no CUDA call leaves under `cudashim run`.
//
// A process that never touches CUDA runs as without cudashim: no report, no stream, no
// thread, no signal handler. Under `cudashim run` (the setting output.no_cuda_record, which
// the wrapper turns on for its job) it still leaves one line at its end, "<pid>\t<name>\n"
// appended to <out>/cudashim-<host>.no-cuda, so that the run's summary can count the job's
// processes that made no CUDA call (a launcher, a shell, a DataLoader worker that never
// touched the GPU) in one line instead of not at all. Off by default: a node-wide preload
// writes nothing for ssh or bash. A process killed by a signal leaves no line.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cudashim::recorder {

struct ProcessInfo;

// The file's name in the output folder: cudashim-<host>.no-cuda.
inline constexpr const char* kNoCudaSuffix = ".no-cuda";
// The most bytes the file grows to: past it no line is added (a script of a million
// processes); `cudashim report` says the count is a floor then.
inline constexpr uint64_t kNoCudaFileLimit = 4u << 20;

// Prepares the file's path and this process's line (allocates: at start-up and in a forked
// child, never on an end path). `on` false, an empty folder or a path too long: nothing is
// ever written.
void no_cuda_configure(bool on, const char* out_dir, const ProcessInfo& info);

// Async-signal-safe, allocates nothing: appends this process's line once, when it made no
// CUDA call (has_activity()) and is the process it was configured for (not a vfork child).
// A file that is not a regular file, or no room under the file-size limit (ulimit -f, whose
// SIGXFSZ would end the process): nothing. errno is kept.
void no_cuda_note_end();

// The program name a line carries: the last part of argv[0] (else of `exe`), without a
// login shell's leading '-', each byte outside [A-Za-z0-9._+@=,:-] written '_', at most
// 48 bytes. "?" when both are empty.
void no_cuda_name(const char* argv0, const char* exe, char* out, size_t size);

}  // namespace cudashim::recorder
