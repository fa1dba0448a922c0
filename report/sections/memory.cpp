// memory.cpp: the report's "memory" section: the ledger per device, host memory apart.
#include "recorder/ledger.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

void write_kinds(JsonWriter& w, const recorder::DeviceStats& d) {
  w.key("kinds");
  auto o = w.object();
  for (int k = 0; k < kMemKinds; ++k) {
    const recorder::KindStats& ks = d.kinds[k];
    if (ks.allocs == 0 && ks.frees == 0) continue;
    w.key(mem_kind_name(static_cast<MemKind>(k)));
    auto row = w.object();
    w.member("live_bytes", ks.live_bytes);
    w.member("peak_bytes", ks.peak_bytes);
    w.member("allocs", ks.allocs);
    w.member("frees", ks.frees);
    w.member("live_allocations", ks.live_count);
  }
}

}  // namespace

void write_memory(JsonWriter& w, const ReportContext&) {
  recorder::DeviceStats devs[kMaxDevices + 1];
  const int n = recorder::ledger_devices(devs, kMaxDevices + 1);
  const recorder::DeviceStats* host = nullptr;
  auto o = w.object();
  w.key("devices");
  {
    auto a = w.array(json_lines(6));
    for (int i = 0; i < n; ++i) {
      const recorder::DeviceStats& d = devs[i];
      if (d.device == kHostDevice) {
        host = &d;
        continue;
      }
      auto row = w.object();
      w.member("device", d.device);
      w.member("live_bytes", d.live_bytes);
      w.member("peak_bytes", d.peak_bytes);
      write_kinds(w, d);
    }
  }
  w.key("host");
  if (host == nullptr) {
    w.null();
  } else {
    auto row = w.object();
    write_kinds(w, *host);
  }
  w.member("ledger_overflows", recorder::ledger_overflows());
  w.member("unknown_frees", recorder::ledger_unknown_frees());
}

}  // namespace cudashim::report
