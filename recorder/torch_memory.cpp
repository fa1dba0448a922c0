// torch_memory.cpp: the snapshots of PyTorch's allocator counters (cold path).
#include "recorder/torch_memory.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>

#include "recorder/clock.h"

namespace cudashim::recorder {
namespace {
std::mutex g_mu;
TorchMemSnapshot g_snap[2];
std::atomic<int> g_state{static_cast<int>(TorchMemState::not_armed)};
}  // namespace

const char* torch_mem_state_name(TorchMemState s) {
  switch (s) {
    case TorchMemState::not_armed: return "no_python";
    case TorchMemState::off: return "off";
    case TorchMemState::asked: return "not_registered";
    case TorchMemState::armed: return "not_reached";
    case TorchMemState::no_torch: return "no_torch";
    case TorchMemState::not_initialized: return "torch_cuda_not_initialized";
    case TorchMemState::read: return "read";
    case TorchMemState::failed: return "failed";
  }
  return "unknown";
}

void torch_mem_set_state(TorchMemState s) { g_state.store(static_cast<int>(s), std::memory_order_release); }
bool torch_mem_advance_state(TorchMemState from, TorchMemState to) {
  int expected = static_cast<int>(from);
  return g_state.compare_exchange_strong(expected, static_cast<int>(to), std::memory_order_acq_rel);
}
TorchMemState torch_mem_state() { return static_cast<TorchMemState>(g_state.load(std::memory_order_acquire)); }

void torch_mem_store(TorchMoment when, const TorchDeviceMemory* rows, int n) {
  std::lock_guard<std::mutex> lock(g_mu);
  TorchMemSnapshot& s = g_snap[static_cast<int>(when)];
  s.taken = true;
  s.t_ns = monotonic_ns();
  s.count = std::clamp(n, 0, kTorchMaxDevices);
  std::copy(rows, rows + s.count, s.devices);
}

TorchMemSnapshot torch_mem_snapshot(TorchMoment when) {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_snap[static_cast<int>(when)];
}

void torch_mem_reset() {
  // A forked child: the parent's mutex may have been held by another thread at fork time.
  new (&g_mu) std::mutex();
  g_snap[0] = TorchMemSnapshot{};
  g_snap[1] = TorchMemSnapshot{};
  // The exit handler registered in the parent's interpreter is inherited by the child:
  // its state stays armed.
}

}  // namespace cudashim::recorder
