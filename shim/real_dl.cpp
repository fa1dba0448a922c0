// real_dl.cpp: find libc's dlvsym by walking its GNU hash table in memory.
//
// Everything here may run inside the first dlsym of the process, which a sanitizer
// runtime makes while it sets up its own interceptors, before any constructor: so it
// allocates nothing, takes no lock and calls no C library function a sanitizer
// intercepts (strcmp, strlen, dl_iterate_phdr: their real pointers are still null
// then). In a CUDASHIM_TSAN tree this file is compiled without instrumentation
// (shim/CMakeLists.txt): ThreadSanitizer's own function-entry hook faults before its
// runtime is initialised.
#include "shim/real_dl.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>

// The linker's symbol for our own ELF header, at the start of our first PT_LOAD.
extern "C" const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

namespace cudashim::shim {
namespace {

struct ObjectView {
  ElfW(Addr) base = 0;
  const ElfW(Sym)* symtab = nullptr;
  const char* strtab = nullptr;
  const uint32_t* gnu_hash = nullptr;
  const ElfW(Half)* versym = nullptr;
  const ElfW(Verdef)* verdef = nullptr;
};

// glibc relocates the d_ptr entries of .dynamic in place on x86-64; a value
// below the load base is still an offset (other loaders, other architectures).
const void* dyn_ptr(ElfW(Addr) base, ElfW(Addr) v) { return reinterpret_cast<const void*>(v < base ? v + base : v); }

bool view_of(const link_map* lm, ObjectView& o) {
  o.base = lm->l_addr;
  const ElfW(Dyn)* dyn = lm->l_ld;
  if (dyn == nullptr) return false;
  for (; dyn->d_tag != DT_NULL; ++dyn) {
    switch (dyn->d_tag) {
      case DT_SYMTAB: o.symtab = static_cast<const ElfW(Sym)*>(dyn_ptr(o.base, dyn->d_un.d_ptr)); break;
      case DT_STRTAB: o.strtab = static_cast<const char*>(dyn_ptr(o.base, dyn->d_un.d_ptr)); break;
      case DT_GNU_HASH: o.gnu_hash = static_cast<const uint32_t*>(dyn_ptr(o.base, dyn->d_un.d_ptr)); break;
      case DT_VERSYM: o.versym = static_cast<const ElfW(Half)*>(dyn_ptr(o.base, dyn->d_un.d_ptr)); break;
      case DT_VERDEF: o.verdef = static_cast<const ElfW(Verdef)*>(dyn_ptr(o.base, dyn->d_un.d_ptr)); break;
      default: break;
    }
  }
  return o.symtab && o.strtab && o.gnu_hash;
}

uint32_t gnu_hash_of(const char* s) {
  uint32_t h = 5381;
  for (; *s; ++s) h = h * 33 + static_cast<unsigned char>(*s);
  return h;
}

// Returns the name of version index `ndx` in the object's verdef chain, or nullptr.
const char* version_name(const ObjectView& o, unsigned ndx) {
  const ElfW(Verdef)* vd = o.verdef;
  for (int guard = 0; vd != nullptr && guard < 4096; ++guard) {
    if (vd->vd_ndx == ndx) {
      const auto* aux = reinterpret_cast<const ElfW(Verdaux)*>(reinterpret_cast<const char*>(vd) + vd->vd_aux);
      return o.strtab + aux->vda_name;
    }
    if (vd->vd_next == 0) break;
    vd = reinterpret_cast<const ElfW(Verdef)*>(reinterpret_cast<const char*>(vd) + vd->vd_next);
  }
  return nullptr;
}

// strcmp(a, b) == 0 without calling the C library (see the top of the file).
bool same_text(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// Looks `name`@`version` up in one loaded object through its GNU hash table.
void* lookup(const ObjectView& o, const char* name, const char* version) {
  const uint32_t nbuckets = o.gnu_hash[0], symoffset = o.gnu_hash[1], bloom_size = o.gnu_hash[2];
  if (nbuckets == 0) return nullptr;
  const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(o.gnu_hash + 4);
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_size);
  const uint32_t* chain = buckets + nbuckets;
  const uint32_t h = gnu_hash_of(name);
  uint32_t idx = buckets[h % nbuckets];
  if (idx < symoffset) return nullptr;
  for (int guard = 0; guard < 65536; ++guard, ++idx) {
    const uint32_t h2 = chain[idx - symoffset];
    if ((h | 1) == (h2 | 1)) {
      const ElfW(Sym)& sym = o.symtab[idx];
      if (sym.st_shndx != SHN_UNDEF && same_text(o.strtab + sym.st_name, name)) {
        const char* v = o.versym ? version_name(o, o.versym[idx] & 0x7fff) : nullptr;
        if (v != nullptr && same_text(v, version)) return reinterpret_cast<void*>(o.base + sym.st_value);
      }
    }
    if (h2 & 1) break;
  }
  return nullptr;
}

struct SelfRange {
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  ElfW(Addr) base = 0;
};

// Our own object, from our ELF header's program headers (dl_iterate_phdr and dladdr
// are intercepted or take the loader's lock). Computed on each call: a few program
// headers, and nothing shared to publish.
SelfRange self_range() {
  const ElfW(Ehdr)* eh = &__ehdr_start;
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(reinterpret_cast<const char*>(eh) + eh->e_phoff);
  SelfRange s;
  // The header is mapped where the PT_LOAD holding file offset 0 starts: that gives the load base.
  for (int i = 0; i < eh->e_phnum; ++i)
    if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0) {
      s.base = reinterpret_cast<ElfW(Addr)>(eh) - ph[i].p_vaddr;
      break;
    }
  // The whole object: from its lowest to its highest PT_LOAD.
  for (int i = 0; i < eh->e_phnum; ++i) {
    if (ph[i].p_type != PT_LOAD) continue;
    const uintptr_t a = s.base + ph[i].p_vaddr;
    if (a < s.lo) s.lo = a;
    if (a + ph[i].p_memsz > s.hi) s.hi = a + ph[i].p_memsz;
  }
  return s;
}

// dlvsym@`version` in the first loaded object that defines it, never ourselves. The
// loader's list (_r_debug, ld.so's own) is walked without its lock: it is in load
// order, and the start-up objects (libc among them) come first and are never unloaded.
void* find_dlvsym(const char* version, ElfW(Addr) self_base) {
  for (const link_map* lm = _r_debug.r_map; lm != nullptr; lm = lm->l_next) {
    if (lm->l_addr == self_base) continue;
    ObjectView o;
    if (!view_of(lm, o)) continue;
    if (void* p = lookup(o, "dlvsym", version)) return p;
  }
  return nullptr;
}

[[noreturn]] void die_missing(const char* what) {
  // No allocation, no stdio: this may run inside the loader.
  const char pre[] = "cudashim: fatal: the C library offers no ";
  const char post[] = "; cudashim cannot interpose dlopen/dlsym in this process (unset LD_PRELOAD)\n";
  size_t n = 0;
  while (what[n] != '\0') ++n;
  (void)!write(2, pre, sizeof pre - 1);
  (void)!write(2, what, n);
  (void)!write(2, post, sizeof post - 1);
  abort();
}

// The versions glibc has given the dl* functions on x86-64: GLIBC_2.34 (merged into libc),
// before that libdl.so.2's GLIBC_2.2.5 (the base version: dlopen, dlsym, dlvsym, dlclose)
// and GLIBC_2.3.4 (dlmopen, added then). tests/oldglibc runs this on glibc 2.31.
constexpr const char* kDlVersions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.3.4"};

template <typename Fn>
Fn next_versioned(void* (*dlvsym_fn)(void*, const char*, const char*), const char* name) {
  for (const char* v : kDlVersions)
    if (void* p = dlvsym_fn(RTLD_NEXT, name, v)) return reinterpret_cast<Fn>(p);
  die_missing(name);
}

// Published once: the first caller to claim it writes g_real, then marks it ready.
// Callers that race it compute the same values and keep their own copy.
RealDl g_real;
std::atomic<int> g_real_state{0};  // 0 unset, 1 being written, 2 ready
thread_local RealDl t_real;

std::atomic<bool> g_constructed{false};
__attribute__((constructor(101))) void mark_constructed() { g_constructed.store(true, std::memory_order_release); }

}  // namespace

bool shim_constructed() { return g_constructed.load(std::memory_order_acquire); }

bool is_own_address(const void* addr) {
  const SelfRange s = self_range();
  const auto a = reinterpret_cast<uintptr_t>(addr);
  return a >= s.lo && a < s.hi;
}

const RealDl& real_dl() {
  if (__builtin_expect(g_real_state.load(std::memory_order_acquire) == 2, 1)) return g_real;
  const ElfW(Addr) self_base = self_range().base;
  void* dlvsym_fn = find_dlvsym("GLIBC_2.34", self_base);
  if (dlvsym_fn == nullptr) dlvsym_fn = find_dlvsym("GLIBC_2.2.5", self_base);
  if (dlvsym_fn == nullptr) die_missing("dlvsym");
  RealDl r;
  r.dlvsym = reinterpret_cast<decltype(r.dlvsym)>(dlvsym_fn);
  r.dlsym = next_versioned<decltype(r.dlsym)>(r.dlvsym, "dlsym");
  r.dlopen = next_versioned<decltype(r.dlopen)>(r.dlvsym, "dlopen");
  r.dlmopen = next_versioned<decltype(r.dlmopen)>(r.dlvsym, "dlmopen");
  r.dlclose = next_versioned<decltype(r.dlclose)>(r.dlvsym, "dlclose");
  int expected = 0;
  if (g_real_state.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
    g_real = r;
    g_real_state.store(2, std::memory_order_release);
    return g_real;
  }
  if (expected == 2) return g_real;
  t_real = r;
  return t_real;
}

}  // namespace cudashim::shim
