// loaded_imports.cpp: versioned-symbol shortfalls of the loaded CUDA libraries, read from
// memory (no libelf: this runs inside the preload library).
#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "symbols/cuda_library.h"
#include "symbols/loaded_libraries.h"
#include "symbols/loaded_memory.h"
#include "symbols/walk_objects.h"

namespace cudashim::symbols {
namespace {

struct Import {
  std::string importer, symbol, version, file;
};
struct Ctx {
  std::set<std::string> wanted;  // loader names of the CUDA libraries to examine
  std::vector<Import> imports;   // collected under dl_iterate_phdr; checked after it returns
};

// The number of .dynsym entries: DT_HASH's nchain, else the end of the GNU hash chains.
size_t symbol_count(const dl_phdr_info* info, uintptr_t hash, uintptr_t gnu_hash) {
  if (hash != 0 && in_segments(info, hash, 8)) return reinterpret_cast<const uint32_t*>(hash)[1];
  if (gnu_hash == 0 || !in_segments(info, gnu_hash, 16)) return 0;
  const uint32_t* h = reinterpret_cast<const uint32_t*>(gnu_hash);
  const uint32_t nbuckets = h[0], symoffset = h[1], bloom = h[2];
  const uintptr_t buckets_at = gnu_hash + 16 + size_t(bloom) * sizeof(ElfW(Addr));
  if (!in_segments(info, buckets_at, size_t(nbuckets) * 4)) return 0;
  const uint32_t* buckets = reinterpret_cast<const uint32_t*>(buckets_at);
  const uint32_t* chain = buckets + nbuckets;
  uint32_t last = 0;
  for (uint32_t b = 0; b < nbuckets; ++b) last = std::max(last, buckets[b]);
  if (last < symoffset) return symoffset;
  while (in_segments(info, reinterpret_cast<uintptr_t>(chain + (last - symoffset)), 4) && !(chain[last - symoffset] & 1)) ++last;
  return last + 1;
}

void examine(const dl_phdr_info* info, Ctx& ctx) {
  const ElfW(Dyn)* dyn = dynamic_of(info);
  if (dyn == nullptr) return;
  uintptr_t symtab = 0, strtab = 0, versym = 0, verneed = 0, hash = 0, gnu_hash = 0;
  size_t strsz = 0, verneednum = 0;
  for (const ElfW(Dyn)* d = dyn; in_segments(info, reinterpret_cast<uintptr_t>(d), sizeof *d) && d->d_tag != DT_NULL; ++d) {
    switch (d->d_tag) {
      case DT_SYMTAB: symtab = relocated(info, d->d_un.d_ptr); break;
      case DT_STRTAB: strtab = relocated(info, d->d_un.d_ptr); break;
      case DT_STRSZ: strsz = d->d_un.d_val; break;
      case DT_VERSYM: versym = relocated(info, d->d_un.d_ptr); break;
      case DT_VERNEED: verneed = relocated(info, d->d_un.d_ptr); break;
      case DT_VERNEEDNUM: verneednum = d->d_un.d_val; break;
      case DT_HASH: hash = relocated(info, d->d_un.d_ptr); break;
      case DT_GNU_HASH: gnu_hash = relocated(info, d->d_un.d_ptr); break;
      default: break;
    }
  }
  if (!symtab || !strtab || !versym || !verneed || !in_segments(info, strtab, strsz)) return;
  const char* str = reinterpret_cast<const char*>(strtab);
  auto text = [&](size_t off) -> const char* { return off < strsz ? str + off : nullptr; };
  // Version index -> (version name, the file it is needed from), CUDA-family files only.
  struct Need {
    uint16_t index;
    const char* version;
    const char* file;
  };
  std::vector<Need> needs;
  uintptr_t vn = verneed;
  for (size_t n = 0; n < verneednum && n < 256 && in_segments(info, vn, sizeof(ElfW(Verneed))); ++n) {
    const auto* v = reinterpret_cast<const ElfW(Verneed)*>(vn);
    const char* file = text(v->vn_file);
    const bool cuda = file && classify_cuda_library(file).has_value();
    uintptr_t va = vn + v->vn_aux;
    for (size_t k = 0; k < v->vn_cnt && k < 256 && in_segments(info, va, sizeof(ElfW(Vernaux))); ++k) {
      const auto* a = reinterpret_cast<const ElfW(Vernaux)*>(va);
      if (cuda && text(a->vna_name)) needs.push_back({static_cast<uint16_t>(a->vna_other), text(a->vna_name), file});
      if (a->vna_next == 0) break;
      va += a->vna_next;
    }
    if (v->vn_next == 0) break;
    vn += v->vn_next;
  }
  if (needs.empty()) return;
  const size_t count = std::min<size_t>(symbol_count(info, hash, gnu_hash), 1u << 20);
  if (!in_segments(info, symtab, count * sizeof(ElfW(Sym))) || !in_segments(info, versym, count * 2)) return;
  const auto* syms = reinterpret_cast<const ElfW(Sym)*>(symtab);
  const auto* vers = reinterpret_cast<const uint16_t*>(versym);
  for (size_t i = 1; i < count && ctx.imports.size() < 100000; ++i) {
    const ElfW(Sym)& s = syms[i];
    if (s.st_shndx != SHN_UNDEF || ELF64_ST_BIND(s.st_info) == STB_WEAK || ELF64_ST_TYPE(s.st_info) != STT_FUNC) continue;
    const uint16_t vi = vers[i] & 0x7fff;
    if (vi < 2) continue;
    const Need* need = nullptr;
    for (const auto& n : needs) need = n.index == vi ? &n : need;
    const char* name = text(s.st_name);
    if (need != nullptr && name != nullptr) ctx.imports.push_back({info->dlpi_name, name, need->version, need->file});
  }
}

}  // namespace

std::vector<MissingImport> missing_versioned_imports(const std::vector<LoadedLibrary>& libs) {
  Ctx ctx;
  for (const auto& l : libs)
    if (l.linkage == "shared") ctx.wanted.insert(l.path);
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto& c = *static_cast<Ctx*>(data);
        if (info->dlpi_name && c.wanted.count(info->dlpi_name)) examine(info, c);
        return 0;
      },
      &ctx);
  // Outside the loader's iteration: look each import up in its provider as loaded.
  std::vector<MissingImport> out;
  std::vector<std::pair<std::string, void*>> providers;  // soname -> NOLOAD handle
  for (const auto& im : ctx.imports) {
    void* h = nullptr;
    bool seen = false;
    for (auto& [f, hh] : providers)
      if (f == im.file) seen = true, h = hh;
    if (!seen) {
      h = open_loaded(im.file.c_str(), RTLD_LAZY);
      providers.emplace_back(im.file, h);
    }
    if (h == nullptr || dlvsym(h, im.symbol.c_str(), im.version.c_str()) != nullptr) continue;  // not loaded, or fine
    MissingImport m{im.importer, im.symbol, im.version, im.file, ""};
    link_map* lm = nullptr;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != nullptr && lm->l_name != nullptr) m.provider_path = lm->l_name;
    out.push_back(std::move(m));
    if (out.size() >= 64) break;
  }
  for (auto& [f, h] : providers)
    if (h != nullptr) close_loaded(h);  // NOLOAD took a reference
  return out;
}

}  // namespace cudashim::symbols
