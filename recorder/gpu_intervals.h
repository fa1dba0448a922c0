// gpu_intervals.h: what the precise mode (shim/cupti_collector.cpp) read from CUPTI's activity
// records: one [start, end) interval per kernel, copy and memset, on the recorder's clock
// (CLOCK_MONOTONIC ns, CUPTI's stamps converted at reading), and the state of the mode for the
// report (docs/gpu-time.md).
//
// Writers are CUPTI's buffer-completion callbacks (CUPTI's own thread, or the thread that
// flushes): a slot is reserved with one atomic add and published with a release store; no
// lock, no allocation. A fixed array in .bss: what does not fit is counted as dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudashim::recorder {

inline constexpr size_t kMaxGpuIntervals = 1u << 20;

// One activity record. No member initializers: the array stays in .bss.
struct GpuInterval {
  uint64_t start_ns, end_ns;  // monotonic
  uint32_t context;           // CUPTI's context id
  int16_t device;             // CUDA ordinal
  enum Kind : uint8_t { kKernel = 0, kCopy = 1, kMemset = 2 } kind;
};

// What the precise mode found (report "gpu_time.precise"). Text members are static strings or
// the fixed buffers here.
struct PreciseState {
  enum Mode : int { kOff = 0, kUnavailable, kCollecting, kStoodAside, kFailed } mode = kOff;
  bool asked = false;           // CUDASHIM_GPU_PRECISE=1
  const char* reason = "";      // why not collecting (static text or `detail`)
  char detail[256] = {};        // a reason with numbers in it
  char library[512] = {};       // the libcupti in use
  const char* found_by = "";    // why that file
  char tried[1024] = {};        // every path tried, "; "-joined, in order
  char client[256] = {};        // the CUPTI client stood aside for
  uint64_t stood_aside_ns = 0;  // monotonic, 0 = never
  int64_t clock_offset_ns = 0;  // CUPTI's timestamp minus CLOCK_MONOTONIC, measured at start
  uint64_t clock_error_ns = 0;  // half the width of the bracket that measured it
  uint64_t buffers = 0, buffer_misses = 0;  // buffers completed; requests refused (pool empty)
};

// Writers of the state: the flush thread, or the thread that made a foreign CUPTI call.
void precise_set_state(const PreciseState& s);
// One interval (CUPTI's completion callback): lock-free, allocation-free.
void precise_record(const GpuInterval& g);

// Readers: copies of what was published.
PreciseState precise_state();
std::vector<GpuInterval> precise_intervals();
uint64_t precise_dropped();

// Forgets everything (a forked child, tests).
void precise_reset();

}  // namespace cudashim::recorder
