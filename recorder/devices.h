// devices.h: what the driver says each CUDA device is (name, PCI address, compute
// capability), asked once by the shim's background thread after the program initialized the
// driver (shim/device_facts.cpp), for the report's "devices" section and the summary's header.
#pragma once
#include <cstdint>

namespace cudashim::recorder {

struct DeviceFacts {
  int ordinal = -1;          // the CUDA ordinal (under the process's CUDA_VISIBLE_DEVICES)
  char name[96] = {};        // cuDeviceGetName: "NVIDIA H200"
  char pci_bus_id[16] = {};  // cuDeviceGetPCIBusId: "0000:18:00.0"
  int cc_major = 0, cc_minor = 0;  // compute capability: 9.0 for sm_90
};

// Publishes the devices once (later calls are ignored until devices_reset()). `n` above the
// table's size keeps the first kMaxDeviceFacts.
void set_devices(const DeviceFacts* devices, int n);
// The devices published, `*n` of them; nullptr and 0 before set_devices().
const DeviceFacts* devices(int* n);
// In a forked child: the parent's devices stay valid (same driver, same devices).
inline constexpr int kMaxDeviceFacts = 64;

}  // namespace cudashim::recorder
