// nvml_api.h: the part of NVML's C ABI the GPU sampler reads (shim/gpu_sampler.cpp), bound
// at run time from a libnvidia-ml the caller dlopen'd: never a DT_NEEDED entry, so a node
// without the driver still loads cudashim. Values and layouts are those of nvml.h (driver
// 535+, NVML 12); nvml.h itself is not in the CUDA toolkit's include folder.
#pragma once
#include <cstdint>

namespace cudashim::symbols {

using NvmlDevice = void*;    // nvmlDevice_t
using NvmlEventSet = void*;  // nvmlEventSet_t

struct NvmlUtilization {  // nvmlUtilization_t: percent of the last sample period
  unsigned int gpu, memory;
};
struct NvmlMemory {  // nvmlMemory_t
  unsigned long long total, free, used;
};
struct NvmlPciInfo {  // nvmlPciInfo_t (v3)
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
union NvmlValue {  // nvmlValue_t
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  signed long long sllVal;
  signed int siVal;
};
struct NvmlSample {  // nvmlSample_t: timeStamp in microseconds of CLOCK_REALTIME
  unsigned long long timeStamp;
  NvmlValue sampleValue;
};
struct NvmlProcessUtilizationSample {  // nvmlProcessUtilizationSample_t
  unsigned int pid;
  unsigned long long timeStamp;
  unsigned int smUtil, memUtil, encUtil, decUtil;
};
struct NvmlEventData {  // nvmlEventData_t
  NvmlDevice device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};

// nvmlReturn_t values the sampler tells apart.
inline constexpr int kNvmlSuccess = 0, kNvmlNotSupported = 3, kNvmlNotFound = 6, kNvmlTimeout = 10;
// nvmlClockType_t, nvmlTemperatureSensors_t, nvmlSamplingType_t, nvmlValueType_t.
inline constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;
inline constexpr int kNvmlGpuUtilizationSamples = 1;
inline constexpr int kNvmlValueUnsignedInt = 1, kNvmlValueUnsignedLong = 2, kNvmlValueUnsignedLongLong = 3;
// nvmlPcieUtilCounter_t: TX is what the GPU sent (device to host), RX what it received.
inline constexpr int kNvmlPcieUtilTxBytes = 0, kNvmlPcieUtilRxBytes = 1;
// nvmlEventType*: the two the sampler registers.
inline constexpr unsigned long long kNvmlEventDoubleBitEcc = 0x2, kNvmlEventXidCritical = 0x8;
// nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*): why the clocks are below their maximum.
inline constexpr uint64_t kClockEventGpuIdle = 0x1, kClockEventAppClocks = 0x2, kClockEventSwPowerCap = 0x4,
                          kClockEventHwSlowdown = 0x8, kClockEventSyncBoost = 0x10, kClockEventSwThermal = 0x20,
                          kClockEventHwThermal = 0x40, kClockEventHwPowerBrake = 0x80, kClockEventDisplay = 0x100;
// The reasons that mean "the work ran slower than it could": power, thermal, hardware slowdown.
inline constexpr uint64_t kClockEventsSlowdown = kClockEventSwPowerCap | kClockEventHwSlowdown | kClockEventSwThermal |
                                                 kClockEventHwThermal | kClockEventHwPowerBrake;

// The functions, by their exported names. Required ones are non-null after a successful
// nvml_bind(); any optional one may be null (an older driver, a product without it).
struct NvmlApi {
  // required
  int (*init)();                                           // nvmlInit_v2
  int (*device_count)(unsigned int*);                      // nvmlDeviceGetCount_v2
  int (*device_by_index)(unsigned int, NvmlDevice*);       // nvmlDeviceGetHandleByIndex_v2
  int (*pci_info)(NvmlDevice, NvmlPciInfo*);               // nvmlDeviceGetPciInfo_v3
  // optional
  int (*shutdown)();                                       // nvmlShutdown
  int (*utilization)(NvmlDevice, NvmlUtilization*);        // nvmlDeviceGetUtilizationRates
  int (*samples)(NvmlDevice, int, unsigned long long, int*, unsigned int*, NvmlSample*);  // nvmlDeviceGetSamples
  int (*process_utilization)(NvmlDevice, NvmlProcessUtilizationSample*, unsigned int*,
                             unsigned long long);          // nvmlDeviceGetProcessUtilization
  int (*clock)(NvmlDevice, int, unsigned int*);            // nvmlDeviceGetClockInfo
  int (*clock_events)(NvmlDevice, unsigned long long*);    // nvmlDeviceGetCurrentClocksEventReasons, else ...ThrottleReasons
  int (*temperature)(NvmlDevice, int, unsigned int*);      // nvmlDeviceGetTemperature
  int (*power)(NvmlDevice, unsigned int*);                 // nvmlDeviceGetPowerUsage (mW)
  int (*power_limit)(NvmlDevice, unsigned int*);           // nvmlDeviceGetEnforcedPowerLimit (mW)
  int (*memory)(NvmlDevice, NvmlMemory*);                  // nvmlDeviceGetMemoryInfo
  int (*event_set_create)(NvmlEventSet*);                  // nvmlEventSetCreate
  int (*register_events)(NvmlDevice, unsigned long long, NvmlEventSet);  // nvmlDeviceRegisterEvents
  int (*event_wait)(NvmlEventSet, NvmlEventData*, unsigned int);         // nvmlEventSetWait_v2 (timeout ms)
  int (*pcie_throughput)(NvmlDevice, int, unsigned int*);  // nvmlDeviceGetPcieThroughput (KB/s over ~20 ms)
};

// Fills `api` from `lookup(name)` (the real dlsym on the caller's handle). Returns the name
// of the first required function that is missing, or nullptr when every required one was found.
const char* nvml_bind(NvmlApi& api, void* (*lookup)(void* ctx, const char* name), void* ctx);

}  // namespace cudashim::symbols
