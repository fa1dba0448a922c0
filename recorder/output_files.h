// output_files.h: the names of the files a process leaves in CUDASHIM_OUT, and how each is
// created (docs/outputs.md).
//
// One base name per process, <dir>/cudashim-<host>-<pid>[-r<rank>], shared by the report
// (.json), the trace (.trace), the event stream (.ndjson) and the flight record
// (-crash.json). Host and pid repeat (containers with pid 1 sharing a volume, an exec'd
// image): the first output of a process claims the base, and when any of the four names
// is already there the base gets the shim's start time, -t<unix ms> (then -t<ms>-2, ...).
// Every file is created O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600, and nothing is
// ever put over anything but a regular file this process created.
#pragma once
#include <cstddef>
#include <string>

namespace cudashim::recorder {

// Sets the plain base for this process (start-up; a forked child). Creates nothing.
void outputs_configure(const char* dir, const char* host, int pid, int rank);

// Returns the base, claimed: moved on (-t<ms>, -t<ms>-2, ...) until none of the four names
// exists, once per process; later calls return the same base. Async-signal-safe (lstat
// only, a static buffer). "" before outputs_configure.
const char* outputs_claim();

// Creates <base><suffix> (outputs_claim()) as a new file: the folder and every missing
// folder above it (0700 each) when missing, then open(O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC|flags, 0600). Returns the
// descriptor or -errno (-EEXIST: the name was taken after the claim; nothing is opened
// over it). Async-signal-safe.
int outputs_create(const char* suffix, int flags);

// Returns how many bytes may be written to a regular file whose end is at `pos` before it
// reaches the process's file-size limit (RLIMIT_FSIZE, `ulimit -f`); UINT64_MAX when there is
// none. A write(2) that starts at or past the limit raises SIGXFSZ, whose default action ends
// the job (issue 37.2): every output checks here first and stops short. Async-signal-safe.
uint64_t file_room(uint64_t pos);

// Writes `text` to `path` whole or not at all: a temporary file <path>.tmp.<pid>.<n>
// created as above in the same folder, then renamed to `path` only where nothing is
// (renameat2 RENAME_NOREPLACE, else link(2)), or over a regular file this process put
// there itself. Anything else at `path` (another process's report, a link, a device, a
// FIFO, a folder) stays as it is: -EEXIST. Creates missing folders (every level, 0700).
// Returns 0 or -errno (-EFBIG: `text` is longer than the file-size limit allows, nothing
// written); never leaves the temporary file behind. The files the process's own base names
// (<base>.json, <base>.trace) stay replaceable however many other paths it writes.
int write_file_atomically(const std::string& path, const std::string& text);

}  // namespace cudashim::recorder
