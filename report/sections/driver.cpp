// driver.cpp: the report's "driver" section: was a libcuda loaded at all (on a machine
// without a driver, a program's dlopen("libcuda.so.1") fails before any hooked call).
#include "recorder/events.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_driver(JsonWriter& w, const ReportContext& c) {
  auto o = w.object();
  w.member("libcuda_dlopen_requests",
           recorder::g_events[static_cast<int>(recorder::Event::libcuda_dlopen_requests)].load(std::memory_order_relaxed));
  const std::string libcuda = recorder::loaded_libcuda();
  w.key("libcuda_loaded");
  if (libcuda.empty()) w.null(); else w.value(libcuda);
  w.member("cuda_version", c.libraries.driver_version);
}

}  // namespace cudashim::report
