// resolve.cpp: finding and adopting the real functions.
#include "shim/resolve.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "policy/admission.h"
#include "recorder/events.h"
#include "recorder/ledger.h"
#include "catalog/mem_kinds.h"
#include "recorder/thread_slots.h"
#include "shim/first_use.h"
#include "shim/thread_flags.h"
#include "shim/log.h"
#include "shim/real_dl.h"
#include "symbols/walk_objects.h"

namespace cudashim::shim {

constinit std::atomic<void*> g_real[kHookCount]{};

namespace {

std::atomic<const void*> g_pinned_last{nullptr};
constinit std::atomic<bool> g_missing_logged[kHookCount]{};

// Keeps the object holding `addr` loaded for good (RTLD_NOLOAD | RTLD_NODELETE).
void pin_object_of(void* addr) {
  Dl_info info;
  link_map* lm = nullptr;
  if (dladdr1(addr, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || lm == nullptr) return;
  if (g_pinned_last.load(std::memory_order_relaxed) == lm) return;
  if (lm->l_name != nullptr && lm->l_name[0] != '\0') {
    symbols::LoaderCall gate;  // serialized with fork (symbols/walk_objects.h)
    void* h = real_dl().dlopen(lm->l_name, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    (void)h;  // a reference we keep on purpose
  }
  g_pinned_last.store(lm, std::memory_order_relaxed);
}

// The libraries a real function may come from when the global scope has none
// (a dlopen with RTLD_LOCAL, as libcudart does with libcuda).
constexpr const char* kDriverSonames[] = {"libcuda.so.1", "libcuda.so"};
constexpr const char* kRuntimeSonames[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};

void* lookup_loaded(const char* const* sonames, size_t n, const char* name) {
  const RealDl& dl = real_dl();
  for (size_t i = 0; i < n; ++i) {
    symbols::LoaderCall gate;  // serialized with fork (symbols/walk_objects.h)
    void* h = dl.dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    void* p = dl.dlsym(h, name);
    dl.dlclose(h);  // NOLOAD took a reference: give it back
    if (p != nullptr && !is_own_address(p)) return p;
  }
  return nullptr;
}

// cuCtxGetDevice and cuPointerGetAttribute are not hooked: the ledger asks them.
using CtxGetDevice = CUresult (*)(CUdevice*);
using PointerGetAttribute = CUresult (*)(void*, CUpointer_attribute, CUdeviceptr);
std::atomic<CtxGetDevice> g_ctx_get_device{nullptr};
std::atomic<PointerGetAttribute> g_pointer_get_attribute{nullptr};

template <typename Fn>
Fn driver_helper(std::atomic<Fn>& slot, const char* name) {
  Fn f = slot.load(std::memory_order_acquire);
  if (f != nullptr) return f;
  void* p = real_dl().dlsym(RTLD_NEXT, name);
  if (p == nullptr || is_own_address(p)) p = lookup_loaded(kDriverSonames, std::size(kDriverSonames), name);
  f = reinterpret_cast<Fn>(p);
  if (f != nullptr) slot.store(f, std::memory_order_release);
  return f;
}

}  // namespace

bool adopt_real(HookId id, void* real) {
  // The shim is about to forward to CUDA: what the start-up deferred happens now, before the
  // first real call (shim/first_use.h). Nothing else fills g_real.
  note_cuda_use();
  std::atomic<void*>& slot = g_real[static_cast<size_t>(id)];
  void* expected = nullptr;
  if (slot.compare_exchange_strong(expected, real, std::memory_order_acq_rel)) {
    pin_object_of(real);
    return true;
  }
  if (expected == real) return true;
  recorder::count_event(recorder::Event::real_conflicts);
  return false;
}

void* resolve_real(HookId id) {
  const HookInfo& info = hook_info(id);
  void* p = nullptr;
  {
    InternalScope internal;
    p = real_dl().dlsym(RTLD_NEXT, info.name);
    if (p != nullptr && is_own_address(p)) p = nullptr;
    if (p == nullptr) {
      p = info.runtime ? lookup_loaded(kRuntimeSonames, std::size(kRuntimeSonames), info.name)
                       : lookup_loaded(kDriverSonames, std::size(kDriverSonames), info.name);
    }
  }
  if (p == nullptr) return nullptr;
  adopt_real(id, p);
  return g_real[static_cast<size_t>(id)].load(std::memory_order_acquire);
}

HookId hook_of_real(const void* addr) {
  for (size_t i = 0; i < kHookCount; ++i)
    if (g_real[i].load(std::memory_order_relaxed) == addr) return static_cast<HookId>(i);
  return HookId::kCount;
}

void adopt_driver_from(const void* real_resolver) {
  Dl_info info;
  link_map* lm = nullptr;
  if (dladdr1(real_resolver, &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 || lm == nullptr) return;
  // A link_map pointer is the handle dlopen returned for that object.
  for (size_t i = 0; i < kHookCount; ++i) {
    if (kHooks[i].runtime || g_real[i].load(std::memory_order_relaxed) != nullptr) continue;
    void* p = real_dl().dlsym(lm, kHooks[i].name);
    if (p != nullptr && !is_own_address(p)) adopt_real(static_cast<HookId>(i), p);
  }
}

void* driver_function(const char* name) {
  void* p = real_dl().dlsym(RTLD_NEXT, name);
  if (p == nullptr || is_own_address(p)) p = lookup_loaded(kDriverSonames, std::size(kDriverSonames), name);
  return p;
}

int device_for(int device, unsigned long long key) {
  if (device != kCurrentDevice) return device;
  if (CtxGetDevice f = driver_helper(g_ctx_get_device, "cuCtxGetDevice")) {
    CUdevice d = 0;
    if (f(&d) == CUDA_SUCCESS && d >= 0 && d < kMaxDevices) return d;
  }
  if (PointerGetAttribute f = driver_helper(g_pointer_get_attribute, "cuPointerGetAttribute")) {
    int ordinal = 0;
    if (f(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, key) == CUDA_SUCCESS && ordinal >= 0 && ordinal < kMaxDevices)
      return ordinal;
  }
  return 0;
}

void note_denied(HookId id, int device, unsigned long long bytes) {
  static std::atomic<uint64_t> denials{0};
  const uint64_t n = denials.fetch_add(1, std::memory_order_relaxed);
  if (n >= 5 && n % 1000 != 0) return;
  log_message(LogLevel::warn,
              "policy denied {} of {} bytes on device {}: {} of {} bytes in use against the cap; returned "
              "CUDA_ERROR_OUT_OF_MEMORY ({} denials so far)",
              hook_info(id).name, bytes, device, recorder::ledger_capped_bytes(device), policy::cap_of(device), n + 1);
}

void note_missing_real(HookId id) {
  if (g_missing_logged[static_cast<size_t>(id)].exchange(true, std::memory_order_relaxed)) return;
  log_message(LogLevel::warn, "no real {} is loaded in this process; the call returns an error",
              hook_info(id).name);
}

}  // namespace cudashim::shim
