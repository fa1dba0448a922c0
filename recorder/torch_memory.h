// torch_memory.h: PyTorch's own allocator counters, as the process's Python read them,
// next to the ledger's view of the same moment (the report's "torch_memory" section).
//
// The shim reads them (shim/torch_counters.cpp) at two moments: when Python runs its
// exit handlers, and after an out-of-memory raised in Python's main thread. Cold path
// only: a mutex guards the snapshots.
#pragma once
#include <cstdint>

namespace cudashim::recorder {

// torch.cuda.memory_stats(device) keys, "all" pools (bytes unless said otherwise), and
// the ledger's device-resident bytes of the same device read right after them.
struct TorchDeviceMemory {
  int device;
  uint64_t allocated, allocated_peak;  // allocated_bytes.all.current / .peak: tensors' blocks
  uint64_t reserved, reserved_peak;    // reserved_bytes.all.current / .peak: segments torch holds
  uint64_t active;                     // active_bytes.all.current
  uint64_t inactive_split;             // inactive_split_bytes.all.current: free parts of split blocks
  uint64_t inactive_split_peak;        // inactive_split_bytes.all.peak
  uint64_t segments;                   // segment.all.current (a count)
  uint64_t alloc_retries;              // num_alloc_retries: cache flushed and cudaMalloc retried
  uint64_t ooms;                       // num_ooms: OutOfMemoryError raised
  uint64_t process_bytes;              // ledger: device-resident bytes the process holds
  uint64_t process_peak_bytes;         // ledger: their high-water mark
};

// Why there is (or is not) a snapshot. Names are the report's "state" strings.
enum class TorchMemState : int {
  not_armed,        // no CPython seen in the process
  off,              // CUDASHIM_TORCH_COUNTERS=0
  asked,            // CPython was asked to register the exit handler; its main thread never ran the request
  armed,            // Python's exit handler is registered; it has not run (yet)
  no_torch,         // it ran: torch.cuda was never imported
  not_initialized,  // it ran: torch never initialized CUDA
  read,             // it ran and read the counters
  failed,           // it ran and torch.cuda.memory_stats raised or returned no dict
};
const char* torch_mem_state_name(TorchMemState s);

enum class TorchMoment : int { exit = 0, oom = 1 };
inline constexpr int kTorchMaxDevices = 16;

struct TorchMemSnapshot {
  bool taken = false;
  uint64_t t_ns = 0;  // monotonic ns when taken
  int count = 0;
  TorchDeviceMemory devices[kTorchMaxDevices] = {};
};

void torch_mem_set_state(TorchMemState s);
// Sets `to` only while the state is `from` (one CAS); returns whether it did.
bool torch_mem_advance_state(TorchMemState from, TorchMemState to);
TorchMemState torch_mem_state();
void torch_mem_store(TorchMoment when, const TorchDeviceMemory* rows, int n);
// A copy of the snapshot taken at `when` (taken = false when there is none).
TorchMemSnapshot torch_mem_snapshot(TorchMoment when);
void torch_mem_reset();

}  // namespace cudashim::recorder
