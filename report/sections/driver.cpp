// driver.cpp: the report's "driver" section: was a libcuda loaded at all (on a machine
// without a driver, a program's dlopen("libcuda.so.1") fails before any hooked call), and
// the kernel module's release as its version file says (CUDASHIM_DRIVER_VERSION_FILE,
// default /proc/driver/nvidia/version; read by the caller: ReportEnvironment).
#include "recorder/events.h"
#include "report/sections/sections.h"
#include "symbols/driver_bridge.h"

namespace cudashim::report {

void write_driver(JsonWriter& w, const ReportContext& c) {
  auto o = w.object();
  w.member("libcuda_dlopen_requests",
           recorder::g_events[static_cast<int>(recorder::Event::libcuda_dlopen_requests)].load(std::memory_order_relaxed));
  const std::string libcuda = recorder::loaded_libcuda();
  w.key("libcuda_loaded");
  if (libcuda.empty()) w.null(); else w.value(libcuda);
  w.member("cuda_version", c.libraries.driver_version);
  const std::optional<symbols::KernelModule>& module = c.environment.kernel_module;
  w.key("kernel_module");
  if (module) w.value(module->version.text); else w.null();
  w.member("kernel_module_open", module.has_value() && module->open);
}

}  // namespace cudashim::report
