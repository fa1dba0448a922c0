// callsites.cpp: the call-site table and first-hit capture.
#include "recorder/callsites.h"

#include <unwind.h>

#include <cstring>

#include "recorder/clock.h"

namespace cudashim::recorder {

std::atomic<PyLocate> g_py_locate{nullptr};
std::atomic<PyCapture> g_py_capture{nullptr};

namespace {

constexpr size_t kSites = 4096;  // power of two
constinit CallSite g_sites[kSites];  // zeroed .bss, no start-up loop

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

struct UnwindState {
  void** frames;
  int depth, max;
};

_Unwind_Reason_Code unwind_cb(_Unwind_Context* ctx, void* arg) {
  auto* s = static_cast<UnwindState*>(arg);
  const uintptr_t ip = _Unwind_GetIP(ctx);
  if (ip == 0) return _URC_END_OF_STACK;
  if (s->depth >= s->max) return _URC_END_OF_STACK;
  s->frames[s->depth++] = reinterpret_cast<void*>(ip);
  return _URC_NO_REASON;
}

// First hit of a site: native backtrace (libgcc's unwinder, linked in statically:
// no dlopen of libgcc_s) and the Python stack when the thread holds the GIL.
void capture(CallSite& s) {
  UnwindState st{s.native, 0, kMaxNativeFrames};
  _Unwind_Backtrace(unwind_cb, &st);
  s.native_depth = st.depth;
  s.py_depth = 0;
  if (PyCapture cap = g_py_capture.load(std::memory_order_acquire)) s.py_depth = cap(s.py, kMaxPyFrames);
}

}  // namespace

CallSite* site_table() { return g_sites; }
size_t site_capacity() { return kSites; }

CallSite* site_for(HookId api, const void* ra, const PyLocation& py) {
  uint64_t key = mix(mix(mix(static_cast<uint64_t>(api) + 1, reinterpret_cast<uintptr_t>(ra)),
                         reinterpret_cast<uintptr_t>(py.code)),
                     static_cast<uint64_t>(py.line));
  if (key == 0) key = 1;
  size_t b = key & (kSites - 1);
  for (size_t probe = 0; probe < 64; ++probe, b = (b + 1) & (kSites - 1)) {
    CallSite& s = g_sites[b];
    uint64_t cur = s.key.load(std::memory_order_acquire);
    if (cur == key) {
      // A racing first hit may still be capturing: count anyway (fields below are set).
      return &s;
    }
    if (cur != 0) continue;
    if (!s.key.compare_exchange_strong(cur, key, std::memory_order_acq_rel)) {
      if (cur == key) return &s;
      continue;
    }
    s.api = api;
    s.return_address = ra;
    s.py_code = py.code;
    s.py_line = py.line;
    s.first_hit_ticks.store(now_ticks(), std::memory_order_relaxed);
    s.captured.store(1, std::memory_order_release);
    capture(s);
    s.captured.store(2, std::memory_order_release);
    return &s;
  }
  return nullptr;
}

void sites_reset() {
  for (auto& s : g_sites) {
    if (s.key.load(std::memory_order_relaxed) == 0) continue;
    s.key.store(0, std::memory_order_relaxed);
    s.hits = 0;
    s.ticks = 0;
    s.bytes = 0;
    s.captured = 0;
    s.after_readback = 0;
    s.pageable = 0;
    s.cpu_samples = 0;
    s.cpu_ns_sampled = 0;
    s.wall_ticks_sampled = 0;
  }
}

}  // namespace cudashim::recorder
