// callsites.cpp: the call-site table and first-hit capture.
#include "recorder/callsites.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include <cstdio>
#include <cstring>

#include "recorder/clock.h"
#include "symbols/walk_objects.h"

namespace cudashim::recorder {

std::atomic<PyLocate> g_py_locate{nullptr};
std::atomic<PyCapture> g_py_capture{nullptr};

namespace {

constexpr size_t kSites = 4096;  // power of two
constinit CallSite g_sites[kSites];  // zeroed .bss, no start-up loop
std::atomic<uint64_t> g_first_site_ticks{0};

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
  s.warmup = false;
  if (PyCapture cap = g_py_capture.load(std::memory_order_acquire)) s.py_depth = cap(s.py, kMaxPyFrames, &s.warmup);
}

}  // namespace

CallSite* site_table() { return g_sites; }
uint64_t first_site_ticks() { return g_first_site_ticks.load(std::memory_order_relaxed); }
size_t site_capacity() { return kSites; }

namespace {

// `salt` 0 (every hook's hit): three rounds of mix, a fourth for a call made in a library's frame; a waiter's site mixes its salt in too.
[[gnu::always_inline]] inline uint64_t site_key(HookId api, const void* ra, const PyLocation& py, uint64_t salt) {
  uint64_t key = mix(mix(mix(static_cast<uint64_t>(api) + 1, reinterpret_cast<uintptr_t>(ra)),
                         reinterpret_cast<uintptr_t>(py.code)),
                     py.ip != nullptr ? reinterpret_cast<uintptr_t>(py.ip) : static_cast<uint64_t>(py.line));
  // Reached through a library's frames: the innermost one too (one more round, only then).
  if (py.inner != nullptr && py.inner != py.code) key = mix(key, reinterpret_cast<uintptr_t>(py.inner));
  if (salt != 0) key = mix(key, salt);
  return key == 0 ? 1 : key;
}

// The slot of `key`, claimed and filled by `fill(site)` on first use (open addressing, 64 probes);
// nullptr when the table is full.
template <typename Fill>
[[gnu::always_inline]] inline CallSite* find_or_claim(uint64_t key, HookId api, const void* ra, const PyLocation& py, Fill&& fill) {
  size_t b = key & (kSites - 1);
  for (size_t probe = 0; probe < 64; ++probe, b = (b + 1) & (kSites - 1)) {
    CallSite& s = g_sites[b];
    uint64_t cur = s.key.load(std::memory_order_acquire);
    if (cur == key) {
      // A racing first hit may still be writing the fields below and capturing: count
      // anyway; readers of api, addresses and stacks wait for captured == 2.
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
    const uint64_t t = now_ticks();
    s.first_hit_ticks.store(t, std::memory_order_relaxed);
    s.last_hit_ticks.store(t, std::memory_order_relaxed);
    uint64_t none = 0;
    g_first_site_ticks.compare_exchange_strong(none, t, std::memory_order_relaxed);
    s.visits.store(0, std::memory_order_relaxed);
    s.last_activity.store(0, std::memory_order_relaxed);
    s.captured.store(1, std::memory_order_release);
    fill(s);
    s.captured.store(2, std::memory_order_release);
    return &s;
  }
  return nullptr;
}

}  // namespace

CallSite* site_for(HookId api, const void* ra, const PyLocation& py) {
  return find_or_claim(site_key(api, ra, py, 0), api, ra, py, [](CallSite& s) {
    s.sampled = false;
    s.reader = nullptr;
    capture(s);
  });
}

CallSite* sampled_site_for(const CallSite& reader, const PyLocation& py, const PyFrameText* frames, int depth) {
  constexpr uint64_t kSampledSalt = 0x5a3d1e0fb7c24a91ull;  // never the key of a site the hooks count
  return find_or_claim(site_key(reader.api, reader.return_address, py, kSampledSalt), reader.api,
                       reader.return_address, py, [&](CallSite& s) {
                         s.sampled = true;
                         s.warmup = false;
                         s.reader = &reader;
                         s.native_depth = reader.native_depth;
                         std::memcpy(s.native, reader.native, sizeof s.native);
                         s.py_depth = depth < kMaxPyFrames ? depth : kMaxPyFrames;
                         for (int i = 0; i < s.py_depth; ++i) s.py[i] = frames[i];
                       });
}

namespace {

struct BuildIdSearch {
  const link_map* map;
  char* hex;
  size_t hex_size;
};

// Copies the NT_GNU_BUILD_ID of the loaded image of `map` (its PT_NOTE segments,
// already mapped) as hex. Notes are 4-byte aligned, or 8 in a segment aligned to 8.
int build_id_cb(dl_phdr_info* info, size_t, void* arg) {
  auto* s = static_cast<BuildIdSearch*>(arg);
  if (info->dlpi_addr != s->map->l_addr || std::strcmp(info->dlpi_name ? info->dlpi_name : "", s->map->l_name) != 0)
    return 0;
  // Only notes inside a loaded segment's file bytes are in memory: nothing obliges a
  // PT_NOTE to lie in a PT_LOAD, and reading one that does not would fault.
  auto mapped = [info](const ElfW(Phdr)& note) {
    for (int j = 0; j < info->dlpi_phnum; ++j) {
      const ElfW(Phdr)& ld = info->dlpi_phdr[j];
      if (ld.p_type == PT_LOAD && note.p_vaddr >= ld.p_vaddr && note.p_memsz <= ld.p_filesz &&
          note.p_vaddr - ld.p_vaddr <= ld.p_filesz - note.p_memsz)
        return true;
    }
    return false;
  };
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE || !mapped(ph)) continue;
    const size_t align = ph.p_align == 8 ? 8 : 4;
    const auto* p = reinterpret_cast<const unsigned char*>(info->dlpi_addr + ph.p_vaddr);
    const unsigned char* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) n;
      std::memcpy(&n, p, sizeof n);
      const unsigned char* name = p + sizeof n;
      const unsigned char* desc = name + ((n.n_namesz + align - 1) & ~(align - 1));
      if (desc + n.n_descsz > end) break;
      if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && std::memcmp(name, "GNU", 4) == 0) {
        size_t k = 0;
        for (uint32_t j = 0; j < n.n_descsz && k + 2 < s->hex_size; ++j, k += 2)
          std::snprintf(s->hex + k, 3, "%02x", desc[j]);
        s->hex[k] = '\0';
        return 1;
      }
      p = desc + ((n.n_descsz + align - 1) & ~(align - 1));
    }
  }
  return 1;
}

}  // namespace

bool frame_file(const void* ra, FrameFile& out) {
  out = FrameFile{};
  Dl_info info;
  link_map* map = nullptr;
  // One byte back: a return address just past a noreturn call may already be in the next object.
  if (dladdr1(static_cast<const char*>(ra) - 1, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0 ||
      map == nullptr)
    return false;
  out.address = reinterpret_cast<uintptr_t>(ra) - map->l_addr;
  if (map->l_name == nullptr || map->l_name[0] == '\0') {  // the main program: dladdr says argv[0]
    const ssize_t n = readlink("/proc/self/exe", out.path, sizeof out.path - 1);
    out.path[n > 0 ? n : 0] = '\0';
  } else {
    std::snprintf(out.path, sizeof out.path, "%s", map->l_name);
  }
  BuildIdSearch search{map, out.build_id, sizeof out.build_id};
  symbols::walk_objects(build_id_cb, &search);
  struct stat st;
  if (out.path[0] != '\0' && stat(out.path, &st) == 0) {
    out.size = static_cast<uint64_t>(st.st_size);
    out.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  }
  return true;
}

void sites_reset() {
  for (auto& s : g_sites) {
    if (s.key.load(std::memory_order_relaxed) == 0) continue;
    s.key.store(0, std::memory_order_relaxed);
    s.hits = 0;
    s.ticks = 0;
    s.bytes = 0;
    s.captured = 0;
    s.classified = false;
    s.sampled = false;
    s.reader = nullptr;
    s.waiter_visits = 0;
    s.after_readback = 0;
    s.pageable = 0;
    s.pooled = 0;
    s.oom_flush = 0;
    s.cpu_samples = 0;
    s.cpu_ns_sampled = 0;
    s.wall_ticks_sampled = 0;
    s.idle_after_ticks = 0;
    s.idle_after_count = 0;
    s.visits = 0;
    s.last_activity = 0;
    s.last_hit_ticks = 0;
  }
  g_first_site_ticks.store(0, std::memory_order_relaxed);
}

}  // namespace cudashim::recorder
