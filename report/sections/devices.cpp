// devices.cpp: the report's "devices" section: what the driver said each CUDA device is
// (recorder/devices.h, asked once on the background thread after the program initialized
// the driver). Empty when the driver was never initialized or the process ended first.
#include <cstdio>

#include "recorder/devices.h"
#include "report/sections/sections.h"

namespace cudashim::report {

void write_devices(JsonWriter& w, const ReportContext&) {
  int n = 0;
  const recorder::DeviceFacts* d = recorder::devices(&n);
  auto a = w.array();
  for (int i = 0; i < n; ++i) {
    auto o = w.object();
    w.member("device", d[i].ordinal);
    w.member("name", std::string(d[i].name));
    w.member("pci_bus_id", std::string(d[i].pci_bus_id));
    char cc[16];
    std::snprintf(cc, sizeof cc, "%d.%d", d[i].cc_major, d[i].cc_minor);
    w.member("compute_capability", std::string(d[i].cc_major > 0 ? cc : ""));
  }
}

}  // namespace cudashim::report
