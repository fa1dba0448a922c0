// cuGetProcAddress / cuGetProcAddress_v2 with the real driver's version and per-thread rules, the
// call counters, and the control API of fakecuda_control.h.
//
// The library links with -Bsymbolic-functions, so the addresses in kRows are this library's own
// definitions even when a preloaded shim defines the same names: what cuGetProcAddress returns is
// exactly what dlsym(handle_of_this_library, "<abi>") returns.
#include "tests/fakecuda/fakecuda_internal.h"

#include <cstring>
#include <type_traits>

// Every row's signature must equal its PFN typedef in cudaTypedefs.h (which also proves that the
// version number in the row is a real one).
#define FAKECUDA_ABI(base, abi, version)                                 \
  static_assert(std::is_same_v<decltype(&abi), PFN_##base##_v##version>, \
                "signature of " #abi " differs from PFN_" #base "_v" #version);
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix)                \
  static_assert(std::is_same_v<decltype(&abi), PFN_##base##_v##version>,                  \
                "signature of " #abi " differs from PFN_" #base "_v" #version);           \
  static_assert(std::is_same_v<decltype(&pt_abi), PFN_##base##_v##pt_version##pt_suffix>, \
                "signature of " #pt_abi " differs from PFN_" #base "_v" #pt_version #pt_suffix);
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT

namespace fc {

Counter g_counts[kSymCount];

namespace {

// Exact exported name of each counter, indexed by Sym.
constexpr const char* kNames[kSymCount] = {
#define FAKECUDA_ABI(base, abi, version) #abi,
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix) #abi, #pt_abi,
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT
};

// This library's own address of each exported entry point, indexed by Sym (parallel to kNames).
const void* const kAddrs[kSymCount] = {
#define FAKECUDA_ABI(base, abi, version) reinterpret_cast<const void*>(&abi),
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix) \
  reinterpret_cast<const void*>(&abi), reinterpret_cast<const void*>(&pt_abi),
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT
};

// One ABI that cuGetProcAddress can hand out, with its optional per-thread twin.
struct ProcRow {
  const char* base;  // name as callers ask for it, e.g. "cuMemAlloc"
  void* fn;          // address of the exported ABI symbol, e.g. cuMemAlloc_v2
  int version;       // CUDA version that introduced this ABI
  void* pt_fn;       // per-thread twin (…_ptds/…_ptsz) or nullptr
  int pt_version;    // CUDA version that introduced the twin
};

const ProcRow kRows[] = {
#define FAKECUDA_ABI(base, abi, version) {#base, reinterpret_cast<void*>(&abi), version, nullptr, 0},
#define FAKECUDA_ABI_PT(base, abi, version, pt_abi, pt_version, pt_suffix) \
  {#base, reinterpret_cast<void*>(&abi), version, reinterpret_cast<void*>(&pt_abi), pt_version},
#include "tests/fakecuda/fakecuda_symbols.inc"
#undef FAKECUDA_ABI
#undef FAKECUDA_ABI_PT
};

// Picks, among the rows of `symbol`, the newest ABI introduced no later than `cudaVersion`; with the
// per-thread flag its per-thread twin when there is one (and it is old enough).
CUresult lookup(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                CUdriverProcAddressQueryResult* symbolStatus) {
  constexpr cuuint64_t kKnownFlags = CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
  if (symbol == nullptr || pfn == nullptr || (flags & ~kKnownFlags) != 0) return CUDA_ERROR_INVALID_VALUE;
  *pfn = nullptr;
  bool known = false;
  const ProcRow* best = nullptr;
  for (const ProcRow& row : kRows) {
    if (std::strcmp(row.base, symbol) != 0) continue;
    known = true;
    if (row.version <= cudaVersion && (best == nullptr || row.version > best->version)) best = &row;
  }
  if (best == nullptr) {
    if (symbolStatus)
      *symbolStatus = known ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  }
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  *pfn = per_thread && best->pt_fn != nullptr && best->pt_version <= cudaVersion ? best->pt_fn : best->fn;
  if (symbolStatus) *symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace
}  // namespace fc

FC_ENTRY(cuGetProcAddress, (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags),
         fc::lookup(symbol, pfn, cudaVersion, flags, nullptr))
FC_ENTRY(cuGetProcAddress_v2,
         (const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
          CUdriverProcAddressQueryResult* symbolStatus),
         fc::lookup(symbol, pfn, cudaVersion, flags, symbolStatus))

// ---------------------------------------------------------------- control API
FC_EXPORT void fakecuda_set_sync_delay_ns(uint64_t ns) { fc::g_sync_delay_ns.store(ns, std::memory_order_relaxed); }

FC_EXPORT uint64_t fakecuda_call_count(const char* exact_abi_name) {
  if (exact_abi_name == nullptr) return 0;
  for (unsigned i = 0; i < fc::kSymCount; ++i)
    if (std::strcmp(fc::kNames[i], exact_abi_name) == 0) return fc::g_counts[i].n.load(std::memory_order_relaxed);
  return 0;
}

FC_EXPORT void* fakecuda_entry_point(const char* exact_abi_name) {
  if (exact_abi_name == nullptr) return nullptr;
  for (unsigned i = 0; i < fc::kSymCount; ++i)
    if (std::strcmp(fc::kNames[i], exact_abi_name) == 0) return const_cast<void*>(fc::kAddrs[i]);
  return nullptr;
}

FC_EXPORT void fakecuda_reset_counts(void) {
  for (fc::Counter& c : fc::g_counts) c.n.store(0, std::memory_order_relaxed);
}
