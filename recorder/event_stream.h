// event_stream.h: the per-process NDJSON event stream.
//
// <dir>/cudashim-<host>-<pid>[-r<rank>].ndjson, one JSON object per line, appended
// with single write(2) calls (O_APPEND): a snapshot every second from a background
// thread (started by the first hooked call, so processes that never touch CUDA get
// no thread and no file), events as they happen (findings, OOMs, library findings),
// and a last line at exit. A process killed with SIGKILL loses at most its last
// second. The snapshots also feed the memory counter track of the trace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace cudashim::recorder {

// Sets the file name (called at start-up and in a forked child). Starts nothing.
void stream_configure(const char* out_dir, const char* host, int pid, int rank);

// Starts the stream (file + flush thread) once; cheap after the first call.
void stream_ensure_started();

// `fn` runs on the flush thread before each snapshot (about once a second): cold,
// background work such as re-reading the library inventory after a dlopen.
void stream_set_tick(void (*fn)());

// The flush thread doubles as the writer of last resort when a signal ends the process
// (shim/terminate.cpp). `on_start` runs on it once, as it starts (the process's first
// CUDA call); `on_wake` runs on it after each stream_wake(). Set before the first call.
void stream_set_wake_handlers(void (*on_start)(), void (*on_wake)());

// Async-signal-safe: makes this process's flush thread run `on_wake` now instead of
// sleeping out its second. Returns false when the process has no flush thread: no CUDA
// call yet (or none since fork), the stream could not be opened, or it has finished.
bool stream_wake();

// Appends one event line: {"t_ns": ..., "type": "<type>", <body>} (body: JSON members).
void stream_event(const char* type, const std::string& body);

// Writes the final snapshot and an "exit" line; stops using the file.
void stream_finish();

struct MemorySample {
  uint64_t t_ns;        // monotonic ns since start-up
  int device;
  uint64_t live_bytes;
};
// The memory samples taken so far (at most one hour at one per second).
std::vector<MemorySample> stream_memory_samples();

}  // namespace cudashim::recorder
