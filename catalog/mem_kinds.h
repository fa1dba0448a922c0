// catalog/mem_kinds.h: the kinds of memory (catalog/mem_kinds.def) and the ledger's device rows.
#pragma once
#include <cstdint>

namespace cudashim {

// What an allocation is. The ledger keeps live and peak bytes per device and kind.
enum class MemKind : uint8_t {
#define CUDASHIM_MEM_KIND(NAME, RESIDENT, WHAT) NAME,
#include "catalog/mem_kinds.def"
  kCount
};
inline constexpr int kMemKinds = static_cast<int>(MemKind::kCount);

// Returns the report name of a memory kind ("unknown" for a value outside the table).
constexpr const char* mem_kind_name(MemKind k) {
  constexpr const char* kNames[] = {
#define CUDASHIM_MEM_KIND(NAME, RESIDENT, WHAT) #NAME,
#include "catalog/mem_kinds.def"
  };
  const int i = static_cast<int>(k);
  return i >= 0 && i < kMemKinds ? kNames[i] : "unknown";
}

// True for the kinds that occupy the device's own memory (the cap applies to them).
constexpr bool is_device_resident(MemKind k) {
  constexpr bool kResident[] = {
#define CUDASHIM_MEM_KIND(NAME, RESIDENT, WHAT) RESIDENT,
#include "catalog/mem_kinds.def"
  };
  const int i = static_cast<int>(k);
  return i >= 0 && i < kMemKinds && kResident[i];
}

inline constexpr int kMaxDevices = 64;
inline constexpr int kHostDevice = kMaxDevices;  // ledger row for host memory
inline constexpr int kCurrentDevice = -1;        // "ask the driver which device is current"
inline constexpr int kUnknownDevice = -2;        // no context on this thread

}  // namespace cudashim
