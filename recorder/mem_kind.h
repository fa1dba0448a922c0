// mem_kind.h: the kinds of memory the ledger tells apart.
#pragma once
#include <cstdint>

namespace cudashim {

// What an allocation is. The ledger keeps live and peak bytes per device and kind.
enum class MemKind : uint8_t {
  device,           // cuMemAlloc_v2, cuMemAllocPitch_v2
  managed,          // cuMemAllocManaged (unified memory)
  async,            // cuMemAllocAsync, cuMemAllocFromPoolAsync (stream-ordered pools)
  host_pinned,      // cuMemAllocHost_v2, cuMemHostAlloc
  host_registered,  // cuMemHostRegister_v2
  vmm_device,       // cuMemCreate with a device location (physical memory)
  vmm_host,         // cuMemCreate with a host location (NCCL makes these)
  ipc,              // cuIpcOpenMemHandle: another process's memory, never counted as ours
  kCount
};
inline constexpr int kMemKinds = static_cast<int>(MemKind::kCount);

// Returns the report name of a memory kind.
const char* mem_kind_name(MemKind k);

// True for the kinds that occupy the device's own memory (the cap applies to them).
constexpr bool is_device_resident(MemKind k) {
  return k == MemKind::device || k == MemKind::async || k == MemKind::vmm_device;
}

inline constexpr int kMaxDevices = 64;
inline constexpr int kHostDevice = kMaxDevices;  // ledger row for host memory
inline constexpr int kCurrentDevice = -1;        // "ask the driver which device is current"
inline constexpr int kUnknownDevice = -2;        // no context on this thread

}  // namespace cudashim
