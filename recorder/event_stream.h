// event_stream.h: the per-process NDJSON event stream.
//
// <base>.ndjson (recorder/output_files.h: <dir>/cudashim-<host>-<pid>[-r<rank>], with the
// start time when those repeat), one JSON object per line, appended
// with single write(2) calls (O_APPEND; before each, fstat checks that the descriptor still
// holds the file it created, else it is reopened by its path or no longer written): a snapshot every second from a background
// thread (started by the first hooked call, so processes that never touch CUDA get
// no thread and no file), events as they happen (findings, OOMs, library findings),
// and a last line at exit. A process killed with SIGKILL loses at most its last
// second. The snapshots also feed the memory counter track of the trace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "recorder/gpu_samples.h"
#include "symbols/loaded_libraries.h"

namespace cudashim::recorder {

// Sets the file name, and every output's base (outputs_configure; called at start-up and in
// a forked child). Starts nothing.
void stream_configure(const char* out_dir, const char* host, int pid, int rank);

// Starts the stream (file + flush thread) once; cheap after the first call.
void stream_ensure_started();

// `fn` runs on the flush thread before each snapshot (about once a second): cold,
// background work such as re-reading the library inventory after a dlopen. `name`: its part
// in the report's self_cost.parts (a string that lives as long as the process).
void stream_set_tick(void (*fn)(), const char* name);

// Adds one more such function, run after the one of stream_set_tick (at most 6 more; false
// when full): the GPU sampler (shim/gpu_sampler.cpp). Set before the first call.
bool stream_add_tick(void (*fn)(), const char* name);

// The flush thread doubles as the writer of last resort when a signal ends the process
// (shim/terminate.cpp). `on_start` runs on it once, as it starts (the process's first
// CUDA call); `on_wake` runs on it after each stream_wake(). Set before the first call.
void stream_set_wake_handlers(void (*on_start)(), void (*on_wake)());

// Where the stream's one warning line goes (its descriptor was closed or reused by the
// program: reopened, or no more lines). Set before the first call.
void stream_set_warn(void (*fn)(const char* line));

// Async-signal-safe: makes this process's flush thread run `on_wake` now instead of
// sleeping out its second. Returns false when the process has no flush thread: no CUDA
// call yet (or none since fork), the stream could not be opened, or it has finished.
bool stream_wake();

// ---- event lines: {"t_ns": <since start-up>, "type": "<type>", <the struct's members>},
// one struct per type (docs/outputs.md). Each is written at once (cold: it allocates);
// nothing happens before the stream has started.

// "finding": a call site became a finding (shim/sync_observer.cpp).
struct FindingEvent {
  const char* id;   // the finding's id
  const char* api;  // the hooked ABI of the site
  uint64_t hits;    // the site's calls so far
};
// "library_load", "library_unload", "library_finding": what a re-read of the library
// inventory saw change (policy/library_inventory.cpp); the objects of recorder/library_json.h.
struct LibraryLoadEvent {
  const symbols::LoadedLibrary& library;
};
struct LibraryUnloadEvent {
  const std::string& path;  // the file (realpath)
};
struct LibraryFindingEvent {
  const Finding& finding;
};
// "signal": a signal is ending the process; the outputs follow (shim/terminate.cpp).
struct SignalEvent {
  int signal;
  const char* name;  // "SIGTERM", "SIGABRT", ...
};
// "gpu_health": one device's health sample (recorder/gpu_samples.h), about once a second.
struct GpuHealthEvent {
  const GpuHealthSample& sample;
};
// "gpu_event": an Xid or double-bit ECC error that NVML reported.
struct GpuErrorEvent {
  const GpuEventRecord& event;
};
void stream_event(const FindingEvent& e);
void stream_event(const GpuHealthEvent& e);
void stream_event(const GpuErrorEvent& e);
void stream_event(const LibraryLoadEvent& e);
void stream_event(const LibraryUnloadEvent& e);
void stream_event(const LibraryFindingEvent& e);
void stream_event(const SignalEvent& e);

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
