// device_facts.cpp: asks the real driver, once, what each CUDA device is (name, PCI
// address, compute capability) for the report's "devices" section. Runs on the shim's
// background thread (a stream tick), never in a hook, and calls no entry point cudashim
// hooks (the device's memory is in the GPU-time health samples instead). Before the program
// has initialized the driver the calls answer CUDA_ERROR_NOT_INITIALIZED and the next tick
// tries again; a process that never initializes it is given up on after a minute of tries.
#include <atomic>

#include "recorder/devices.h"
#include "recorder/event_stream.h"
#include "shim/cuda_abi.h"
#include "shim/resolve.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {
namespace {

constexpr int kMaxTries = 60;
constexpr int kAttrCcMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kAttrCcMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR

bool read_devices() {
  using CountFn = CUresult (*)(int*);
  using NameFn = CUresult (*)(char*, int, CUdevice);
  using BusFn = CUresult (*)(char*, int, CUdevice);
  using AttrFn = CUresult (*)(int*, int, CUdevice);
  auto count = reinterpret_cast<CountFn>(driver_function("cuDeviceGetCount"));
  auto name = reinterpret_cast<NameFn>(driver_function("cuDeviceGetName"));
  auto bus = reinterpret_cast<BusFn>(driver_function("cuDeviceGetPCIBusId"));
  auto attr = reinterpret_cast<AttrFn>(driver_function("cuDeviceGetAttribute"));
  int n = 0;
  if (count == nullptr || count(&n) != CUDA_SUCCESS) return false;  // not loaded or not initialized yet
  static recorder::DeviceFacts found[recorder::kMaxDeviceFacts];  // the background thread's only
  if (n > recorder::kMaxDeviceFacts) n = recorder::kMaxDeviceFacts;
  for (int d = 0; d < n; ++d) {
    recorder::DeviceFacts& f = found[d];
    f = recorder::DeviceFacts{};
    f.ordinal = d;
    if (name != nullptr && name(f.name, sizeof f.name - 1, d) != CUDA_SUCCESS) f.name[0] = '\0';
    if (bus != nullptr && bus(f.pci_bus_id, sizeof f.pci_bus_id - 1, d) != CUDA_SUCCESS) f.pci_bus_id[0] = '\0';
    if (attr != nullptr && (attr(&f.cc_major, kAttrCcMajor, d) != CUDA_SUCCESS ||
                            attr(&f.cc_minor, kAttrCcMinor, d) != CUDA_SUCCESS))
      f.cc_major = f.cc_minor = 0;
  }
  recorder::set_devices(found, n);
  return true;
}

std::atomic<bool> g_done{false};
std::atomic<bool> g_busy{false};  // one reader at a time: the tick, or the report at exit

void try_once() {
  if (g_done.load(std::memory_order_acquire) || g_busy.exchange(true, std::memory_order_acq_rel)) return;
  InternalScope internal;  // the driver calls below are ours, not the program's
  if (read_devices()) g_done.store(true, std::memory_order_release);
  g_busy.store(false, std::memory_order_release);
}

}  // namespace

void device_facts_tick() {
  static int tries = 0;
  if (tries >= kMaxTries) return;
  ++tries;
  try_once();
}

// Before the report: a process that ended within its first tick of the driver being
// initialized still names its devices.
void device_facts_final() { try_once(); }

}  // namespace cudashim::shim
