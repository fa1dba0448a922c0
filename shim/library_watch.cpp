// library_watch.cpp: module loads as the hooks see them, and the watcher's tick.
#include "shim/library_watch.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>

#include "policy/library_inventory.h"
#include "recorder/clock.h"
#include "recorder/library_log.h"
#include "catalog/mem_kinds.h"
#include "recorder/thread_slots.h"
#include "shim/thread_flags.h"
#include "shim/cuda_abi.h"
#include "shim/log.h"
#include "shim/resolve.h"
#include "symbols/fatbin.h"

namespace cudashim::shim {
namespace {

constexpr uint32_t kFatbinWrapperMagic = 0x466243b1u;  // __fatBinC_Wrapper_t: magic, version, data, filename
constexpr uint64_t kMaxImage = 2ull << 30;

// The compute capability of the calling thread's current device (e.g. 90), cached.
int current_sm() {
  static std::atomic<int> cache[kMaxDevices];
  using CtxGetDevice = CUresult (*)(CUdevice*);
  using GetAttribute = CUresult (*)(int*, CUdevice_attribute, CUdevice);
  // Constant-initialized atomics, not `static auto f = driver_function(...)`: a guarded static
  // being initialized by another thread at fork() stays "in progress" in the child, whose
  // next call would wait for it forever (hygiene.guards).
  static std::atomic<CtxGetDevice> ctx_get_device_fn{nullptr};
  static std::atomic<GetAttribute> get_attribute_fn{nullptr};
  auto ctx_get_device = ctx_get_device_fn.load(std::memory_order_relaxed);
  if (ctx_get_device == nullptr) {
    ctx_get_device = reinterpret_cast<CtxGetDevice>(driver_function("cuCtxGetDevice"));
    ctx_get_device_fn.store(ctx_get_device, std::memory_order_relaxed);
  }
  auto get_attribute = get_attribute_fn.load(std::memory_order_relaxed);
  if (get_attribute == nullptr) {
    get_attribute = reinterpret_cast<GetAttribute>(driver_function("cuDeviceGetAttribute"));
    get_attribute_fn.store(get_attribute, std::memory_order_relaxed);
  }
  if (ctx_get_device == nullptr || get_attribute == nullptr) return 0;
  CUdevice d = 0;
  if (ctx_get_device(&d) != CUDA_SUCCESS || d < 0 || d >= kMaxDevices) return 0;
  if (int sm = cache[d].load(std::memory_order_relaxed)) return sm;
  int major = 0, minor = 0;
  if (get_attribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) != CUDA_SUCCESS ||
      get_attribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d) != CUDA_SUCCESS)
    return 0;
  const int sm = major * 10 + minor;
  cache[d].store(sm, std::memory_order_relaxed);
  return sm;
}

uint32_t read_u32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// A fatbin container: what it carries and what serves `sm`.
void describe_fatbin(const uint8_t* data, recorder::ModuleLoad& m) {
  uint16_t header = 0;
  uint64_t size = 0;
  std::memcpy(&header, data + 6, sizeof header);
  std::memcpy(&size, data + 8, sizeof size);
  if (header < 16 || size > kMaxImage) {
    m.kind = "fatbin";
    return;
  }
  m.kind = "fatbin";
  m.bytes = header + size;
  const symbols::Fatbin fb = symbols::parse_fatbin(data, m.bytes);
  std::set<std::string> archs;
  for (const auto& e : fb.entries) {
    archs.insert(e.arch_name());
    const uint64_t n = e.uncompressed_size ? e.uncompressed_size : e.payload_size;
    if (e.kind == static_cast<uint16_t>(symbols::FatbinKind::cubin)) m.sass_bytes += n;
    if (e.kind == static_cast<uint16_t>(symbols::FatbinKind::ptx)) m.ptx_bytes += n;
  }
  for (const auto& a : archs) m.archs += (m.archs.empty() ? "" : " ") + a;
  if (m.sm <= 0) return;
  const symbols::Coverage c = symbols::coverage_for(fb, m.sm);
  // A container whose code holds no kernel (host-side registration only) needs none.
  m.coverage = c.containers == 0 && c.containers_empty > 0 ? "no_kernels" : symbols::coverage_name(c.kind);
  m.ptx_jit_bytes = c.kind == symbols::CoverageKind::ptx_jit ? c.ptx_jit_bytes : 0;
  for (const auto& e : fb.entries)
    if (e.kind == static_cast<uint16_t>(symbols::FatbinKind::cubin) && e.arch_name() == c.best_sass)
      m.sass_bytes_for_sm += e.uncompressed_size ? e.uncompressed_size : e.payload_size;
}

// A cubin (an ELF image for one SM): its size from the header; the driver accepted
// it only if it runs here, so the load's result says whether it serves this GPU.
void describe_cubin(const uint8_t* data, recorder::ModuleLoad& m) {
  m.kind = "cubin";
  if (data[EI_CLASS] != ELFCLASS64) return;
  Elf64_Ehdr eh;
  std::memcpy(&eh, data, sizeof eh);
  const uint64_t end = std::max<uint64_t>(eh.e_shoff + uint64_t(eh.e_shnum) * eh.e_shentsize,
                                          eh.e_phoff + uint64_t(eh.e_phnum) * eh.e_phentsize);
  if (end <= kMaxImage) m.bytes = end;
  // e_flags carry the SM: bits 0-7 up to ABI version 7, bits 8-15 from version 8 (CUDA 12.8+).
  const unsigned sm = data[EI_ABIVERSION] >= 8 ? (eh.e_flags >> 8) & 0xff : eh.e_flags & 0xff;
  if (sm > 0) m.archs = "sm_" + std::to_string(sm);
  m.sass_bytes = m.bytes;
  if (m.result == 0) m.coverage = "sass", m.sass_bytes_for_sm = m.bytes;
  // Kernels Triton compiled (loaded by Triton's launcher or by torch's own static
  // launcher for Inductor) carry Triton's kernel names in the string table.
  if (m.bytes > 0 && m.bytes <= (64u << 20)) {
    const std::string_view image(reinterpret_cast<const char*>(data), m.bytes);
    if (image.find(".text.triton_") != std::string_view::npos || image.find("\0triton_") != std::string_view::npos)
      m.origin = "triton";
  }
}

void describe_image(const void* image, recorder::ModuleLoad& m) {
  const auto* p = static_cast<const uint8_t*>(image);
  uint32_t magic = read_u32(p);
  if (magic == kFatbinWrapperMagic) {  // cudart's registration wrapper: the container is behind it
    const void* data = nullptr;
    std::memcpy(&data, p + 8, sizeof data);
    if (data == nullptr) return;
    p = static_cast<const uint8_t*>(data);
    magic = read_u32(p);
  }
  // A rejected image may be garbage: read past the magic only if the driver took it
  // (or refused it for want of code for this GPU, which needs a well-formed image).
  const bool well_formed = m.result == 0 || m.result == 209 /* CUDA_ERROR_NO_BINARY_FOR_GPU */;
  if (magic == symbols::kFatbinMagic) {
    if (well_formed) describe_fatbin(p, m);
    else m.kind = "fatbin";
  } else if (std::memcmp(p, ELFMAG, SELFMAG) == 0) {
    if (well_formed) describe_cubin(p, m);
    else m.kind = "cubin";
  } else if (well_formed) {
    // PTX is NUL-terminated text; it is always JIT-compiled.
    const char* text = reinterpret_cast<const char*>(p);
    const size_t n = strnlen(text, 512u << 20);
    if (std::string_view(text, std::min<size_t>(n, 4096)).find(".target") != std::string_view::npos) {
      m.kind = "ptx", m.bytes = n, m.ptx_bytes = n, m.archs = "ptx";
      if (m.result == 0) m.coverage = "ptx_jit", m.ptx_jit_bytes = n;
    } else {
      m.kind = "unknown";
    }
  }
}

}  // namespace

void note_module_load(HookId id, const void* image, bool is_path, int result, uint64_t dt_ticks, const void* caller) {
  if (g_inert.load(std::memory_order_relaxed)) return;
  InternalScope internal;
  try {
    recorder::ModuleLoad m;
    m.t_ns = monotonic_ns();
    m.dt_ns = ticks_to_ns(dt_ticks);
    m.api = id;
    m.result = result;
    Dl_info info;
    if (caller != nullptr && dladdr(caller, &info) != 0 && info.dli_fname != nullptr) m.caller = info.dli_fname;
    // The owner: the loaded module whose mapping holds the image (or cudart's registration
    // wrapper, which lives next to it), not the runtime that passes it on.
    if (image != nullptr && !is_path && dladdr(image, &info) != 0 && info.dli_fname != nullptr) m.owner = info.dli_fname;
    m.sm = current_sm();
    if (image == nullptr) {
      m.kind = "unknown";
    } else if (is_path) {
      m.kind = "file";
      m.path = static_cast<const char*>(image);
      struct stat st {};
      if (stat(m.path.c_str(), &st) == 0) m.bytes = static_cast<uint64_t>(st.st_size);
    } else {
      describe_image(image, m);
    }
    recorder::log_module_load(std::move(m));
  } catch (...) {
  }
}

namespace {
std::atomic<int> g_driver_version{0};
}  // namespace

void note_driver_version(int version) { g_driver_version.store(version, std::memory_order_relaxed); }
int live_driver_version() { return g_driver_version.load(std::memory_order_relaxed); }

namespace {
void rescan(bool force) {
  if (g_inert.load(std::memory_order_relaxed)) return;
  InternalScope internal;  // our own dlopen(RTLD_NOLOAD)/dlclose are not the program's
  try {
    policy::LiveDriverFacts facts;
    facts.driver_version = live_driver_version();
    for (const policy::LiveLine& line : policy::libraries_rescan(facts, force))
      log_message(line.severity == Severity::info ? LogLevel::info : LogLevel::warn, "{}", line.text);
  } catch (...) {
  }
}
}  // namespace

void library_watch_tick() { rescan(false); }
void library_watch_final() { rescan(true); }

}  // namespace cudashim::shim
