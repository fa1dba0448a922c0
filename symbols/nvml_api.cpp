// nvml_api.cpp: see nvml_api.h.
#include "symbols/nvml_api.h"

#include <type_traits>

namespace cudashim::symbols {

const char* nvml_bind(NvmlApi& api, void* (*lookup)(void* ctx, const char* name), void* ctx) {
  api = NvmlApi{};
  auto get = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(lookup(ctx, name));
    return fn != nullptr;
  };
  if (!get(api.init, "nvmlInit_v2")) return "nvmlInit_v2";
  if (!get(api.device_count, "nvmlDeviceGetCount_v2")) return "nvmlDeviceGetCount_v2";
  if (!get(api.device_by_index, "nvmlDeviceGetHandleByIndex_v2")) return "nvmlDeviceGetHandleByIndex_v2";
  if (!get(api.pci_info, "nvmlDeviceGetPciInfo_v3")) return "nvmlDeviceGetPciInfo_v3";
  get(api.shutdown, "nvmlShutdown");
  get(api.utilization, "nvmlDeviceGetUtilizationRates");
  get(api.samples, "nvmlDeviceGetSamples");
  get(api.process_utilization, "nvmlDeviceGetProcessUtilization");
  get(api.clock, "nvmlDeviceGetClockInfo");
  // Renamed in NVML 12 (driver 535); the old name stays exported with the same ABI.
  if (!get(api.clock_events, "nvmlDeviceGetCurrentClocksEventReasons"))
    get(api.clock_events, "nvmlDeviceGetCurrentClocksThrottleReasons");
  get(api.temperature, "nvmlDeviceGetTemperature");
  get(api.power, "nvmlDeviceGetPowerUsage");
  get(api.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  get(api.memory, "nvmlDeviceGetMemoryInfo");
  get(api.event_set_create, "nvmlEventSetCreate");
  get(api.register_events, "nvmlDeviceRegisterEvents");
  get(api.event_wait, "nvmlEventSetWait_v2");
  get(api.pcie_throughput, "nvmlDeviceGetPcieThroughput");
  return nullptr;
}

}  // namespace cudashim::symbols
