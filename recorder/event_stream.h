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
