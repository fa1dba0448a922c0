// devices.cpp: the device table, written once by the background thread, read by the report.
#include "recorder/devices.h"

#include <atomic>

namespace cudashim::recorder {
namespace {
DeviceFacts g_devices[kMaxDeviceFacts];
std::atomic<int> g_count{-1};  // -1: not published; the table is complete once this is set
std::atomic<bool> g_claimed{false};
}  // namespace

void set_devices(const DeviceFacts* devices, int n) {
  if (g_claimed.exchange(true, std::memory_order_acq_rel)) return;
  if (n > kMaxDeviceFacts) n = kMaxDeviceFacts;
  for (int i = 0; i < n; ++i) g_devices[i] = devices[i];
  g_count.store(n, std::memory_order_release);
}

const DeviceFacts* devices(int* n) {
  const int c = g_count.load(std::memory_order_acquire);
  *n = c > 0 ? c : 0;
  return c > 0 ? g_devices : nullptr;
}

}  // namespace cudashim::recorder
