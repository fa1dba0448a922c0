// real_dl.cpp: find libc's dlvsym by walking its GNU hash table in memory.
#include "shim/real_dl.h"

#include <elf.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

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

bool view_of(const dl_phdr_info* info, ObjectView& o) {
  o.base = info->dlpi_addr;
  const ElfW(Dyn)* dyn = nullptr;
  for (int i = 0; i < info->dlpi_phnum; ++i)
    if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
      dyn = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
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

// strcmp(a, b) == 0 without calling the C library: real_dl() runs inside the first
// dlsym of the process, which a sanitizer runtime makes while it sets up its own
// interceptors (strcmp among them: calling it then jumps to address 0).
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

struct FindDlvsym {
  const char* version;
  void* result;
  ElfW(Addr) self_base;
};

int find_dlvsym_cb(dl_phdr_info* info, size_t, void* data) {
  auto* f = static_cast<FindDlvsym*>(data);
  if (info->dlpi_addr == f->self_base) return 0;  // never ourselves
  ObjectView o;
  if (!view_of(info, o)) return 0;
  f->result = lookup(o, "dlvsym", f->version);
  return f->result != nullptr;
}

struct SelfRange {
  uintptr_t lo = 0, hi = 0;
  ElfW(Addr) base = 0;
};
SelfRange g_self;
std::atomic<bool> g_self_known{false};

int self_cb(dl_phdr_info* info, size_t, void* data) {
  const auto here = reinterpret_cast<uintptr_t>(&self_cb);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
    if (here >= lo && here < hi) {
      auto* s = static_cast<SelfRange*>(data);
      s->base = info->dlpi_addr;
      // The whole object: from its lowest to its highest PT_LOAD.
      s->lo = UINTPTR_MAX;
      s->hi = 0;
      for (int j = 0; j < info->dlpi_phnum; ++j) {
        const ElfW(Phdr)& p = info->dlpi_phdr[j];
        if (p.p_type != PT_LOAD) continue;
        const uintptr_t a = info->dlpi_addr + p.p_vaddr;
        if (a < s->lo) s->lo = a;
        if (a + p.p_memsz > s->hi) s->hi = a + p.p_memsz;
      }
      return 1;
    }
  }
  return 0;
}

const SelfRange& self_range() {
  if (!g_self_known.load(std::memory_order_acquire)) {
    SelfRange s;
    dl_iterate_phdr(self_cb, &s);
    g_self = s;
    g_self_known.store(true, std::memory_order_release);
  }
  return g_self;
}

[[noreturn]] void die_missing(const char* what) {
  // No allocation, no stdio: this may run inside the loader.
  const char pre[] = "cudashim: fatal: the C library offers no ";
  const char post[] = "; cudashim cannot interpose dlopen/dlsym in this process (unset LD_PRELOAD)\n";
  (void)!write(2, pre, sizeof pre - 1);
  (void)!write(2, what, std::strlen(what));
  (void)!write(2, post, sizeof post - 1);
  abort();
}

template <typename Fn>
Fn next_versioned(void* (*dlvsym_fn)(void*, const char*, const char*), const char* name) {
  void* p = dlvsym_fn(RTLD_NEXT, name, "GLIBC_2.34");
  if (p == nullptr) p = dlvsym_fn(RTLD_NEXT, name, "GLIBC_2.2.5");
  if (p == nullptr) die_missing(name);
  return reinterpret_cast<Fn>(p);
}

RealDl g_real;
std::atomic<bool> g_real_ready{false};

}  // namespace

bool is_own_address(const void* addr) {
  const SelfRange& s = self_range();
  const auto a = reinterpret_cast<uintptr_t>(addr);
  return a >= s.lo && a < s.hi;
}

const RealDl& real_dl() {
  if (__builtin_expect(g_real_ready.load(std::memory_order_acquire), 1)) return g_real;
  // Racing first callers compute the same values; publishing twice is harmless.
  FindDlvsym f{"GLIBC_2.34", nullptr, self_range().base};
  dl_iterate_phdr(find_dlvsym_cb, &f);
  if (f.result == nullptr) {
    f.version = "GLIBC_2.2.5";
    dl_iterate_phdr(find_dlvsym_cb, &f);
  }
  if (f.result == nullptr) die_missing("dlvsym");
  RealDl r;
  r.dlvsym = reinterpret_cast<decltype(r.dlvsym)>(f.result);
  r.dlsym = next_versioned<decltype(r.dlsym)>(r.dlvsym, "dlsym");
  r.dlopen = next_versioned<decltype(r.dlopen)>(r.dlvsym, "dlopen");
  r.dlmopen = next_versioned<decltype(r.dlmopen)>(r.dlvsym, "dlmopen");
  r.dlclose = next_versioned<decltype(r.dlclose)>(r.dlvsym, "dlclose");
  g_real = r;
  g_real_ready.store(true, std::memory_order_release);
  return g_real;
}

}  // namespace cudashim::shim
