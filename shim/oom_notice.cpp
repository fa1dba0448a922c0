// oom_notice.cpp: the log line of an out-of-memory.
#include "shim/oom_notice.h"
#include "shim/torch_counters.h"

#include <atomic>
#include <string>

#include "policy/sync_rules.h"
#include "recorder/callsites.h"
#include "recorder/oom.h"
#include "recorder/thread_slots.h"
#include "shim/log.h"

namespace cudashim::shim {

void note_oom(HookId id, int device, uint64_t bytes, bool denied) {
  torch_counters_after_oom();  // torch's own view, read once the main thread is back in Python
  g_flags.oom_recovery = true;  // the frees that follow are a cache flush (shim/sync_observer.cpp)
  static std::atomic<bool> first_logged{false};
  static std::atomic<uint64_t> driver_refusals{0};
  if (!first_logged.exchange(true, std::memory_order_relaxed)) {
    const recorder::OomSnapshot s = recorder::oom_first();
    std::string where;
    for (int i = 0; i < s.sites && i < 3; ++i) {
      const auto* site = static_cast<const recorder::CallSite*>(s.site[i].site);
      where += fmt::format("{}{} ({} bytes in {} allocations)", i ? "; " : "",
                           site ? policy::describe_site(*site) : std::string("unknown site"), s.site[i].bytes,
                           s.site[i].count);
    }
    for (int i = 0; i < s.devices; ++i) {
      const recorder::OomDevice& d = s.device[i];
      if (d.device != device) continue;
      log_message(LogLevel::warn,
                  "out of memory on device {}: {} asked {} bytes ({}); the process holds {} bytes there ({} of them "
                  "cached by the pool), cap {}; the largest block it could still get: {} bytes ({}); most memory held "
                  "by: {}",
                  device, hook_info(id).name, bytes, denied ? "denied by the policy" : "refused by the driver",
                  d.live_bytes, d.cached_bytes, d.cap ? std::to_string(d.cap) + " bytes" : std::string("none"),
                  d.largest_block,
                  std::string(d.basis) == "cap"           ? "cap minus what it holds"
                  : std::string(d.basis) == "driver_free" ? "the driver's free memory, an upper bound: fragmentation can "
                                                            "make it smaller"
                                                          : "unknown",
                  where.empty() ? std::string("no call site known") : where);
      return;
    }
    log_message(LogLevel::warn, "out of memory on device {}: {} asked {} bytes ({})", device, hook_info(id).name, bytes,
                denied ? "denied by the policy" : "refused by the driver");
    return;
  }
  if (denied) return;
  const uint64_t n = driver_refusals.fetch_add(1, std::memory_order_relaxed);
  if (n >= 5 && n % 1000 != 0) return;
  log_message(LogLevel::warn, "out of memory on device {}: {} asked {} bytes, refused by the driver ({} so far)", device,
              hook_info(id).name, bytes, n + 2);
}

}  // namespace cudashim::shim
