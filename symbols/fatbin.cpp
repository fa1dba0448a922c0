#include "symbols/fatbin.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <tuple>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "symbols/bounded_read.h"

namespace cudashim::symbols {
namespace {

constexpr std::size_t kContainerHeader = 16, kEntryHeader = 64;

template <class T>
T load(const std::uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

std::uint64_t align8(std::uint64_t v) { return v > UINT64_MAX - 7 ? UINT64_MAX : (v + 7) & ~std::uint64_t{7}; }

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// Does an uncompressed cubin (an ELF64 image of `size` bytes) hold kernels? Kernels live in
// ".text.<name>" sections; a cubin without one (nvcc emits such empty ones) can run nothing.
KernelPresence cubin_kernels(const std::uint8_t* elf, std::uint64_t size) {
  if (size < 64 || std::memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 /* ELFCLASS64 */) return KernelPresence::unknown;
  const std::uint64_t shoff = load<std::uint64_t>(elf + 0x28);
  const std::uint16_t shentsize = load<std::uint16_t>(elf + 0x3a), shnum = load<std::uint16_t>(elf + 0x3c),
                      shstrndx = load<std::uint16_t>(elf + 0x3e);
  if (shentsize < 64 || shnum == 0 || shstrndx >= shnum || shoff > size || (size - shoff) / shentsize < shnum)
    return KernelPresence::unknown;
  const std::uint8_t* strhdr = elf + shoff + std::uint64_t{shstrndx} * shentsize;
  const std::uint64_t stroff = load<std::uint64_t>(strhdr + 0x18), strsize = load<std::uint64_t>(strhdr + 0x20);
  if (stroff > size || strsize > size - stroff) return KernelPresence::unknown;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::uint32_t name = load<std::uint32_t>(elf + shoff + std::uint64_t{i} * shentsize);
    if (name >= strsize) continue;
    const char* n = reinterpret_cast<const char*>(elf + stroff + name);
    const std::size_t room = static_cast<std::size_t>(strsize - name);
    if (room > 6 && std::memcmp(n, ".text.", 6) == 0) return KernelPresence::some;
  }
  return KernelPresence::none;
}

// Does uncompressed PTX text declare an entry point?
KernelPresence ptx_kernels(const std::uint8_t* text, std::uint64_t size) {
  static constexpr char kEntry[] = ".entry";
  return memmem(text, size, kEntry, sizeof kEntry - 1) != nullptr ? KernelPresence::some : KernelPresence::none;
}

// Parses the entries of one container held in [begin, end) of `data`.
void parse_entries(const std::uint8_t* data, std::uint64_t begin, std::uint64_t end, int container,
                   std::size_t max_entries, Fatbin& out) {
  std::uint64_t e = begin;
  while (e < end && end - e >= kEntryHeader) {
    if (out.entries.size() >= max_entries) {
      out.problems.push_back("more than " + std::to_string(max_entries) + " entries: the rest is not read");
      return;
    }
    const std::uint8_t* h = data + e;
    FatbinEntry entry;
    entry.kind = load<std::uint16_t>(h + 0);
    entry.header_size = load<std::uint32_t>(h + 4);
    entry.payload_size = load<std::uint64_t>(h + 8);
    entry.compressed_size = load<std::uint32_t>(h + 16);
    entry.version_minor = load<std::uint16_t>(h + 24);
    entry.version_major = load<std::uint16_t>(h + 26);
    entry.sm_arch = load<std::uint32_t>(h + 28);
    entry.flags = load<std::uint64_t>(h + 40);
    const std::uint64_t uncompressed = load<std::uint64_t>(h + 56);
    entry.compressed = (entry.flags & (kFatbinFlagCompressedLz4 | kFatbinFlagCompressed)) != 0;
    entry.arch_specific = (entry.flags & kFatbinFlagArchSpecific) != 0;
    entry.uncompressed_size = entry.compressed ? uncompressed : entry.payload_size;
    entry.offset = e;
    entry.container = container;
    if (entry.header_size < kEntryHeader || entry.header_size > end - e) {
      out.problems.push_back("entry at " + hex(e) + ": bad header size " + std::to_string(entry.header_size));
      return;
    }
    entry.payload_offset = e + entry.header_size;
    const std::uint64_t room = end - entry.payload_offset;
    const bool truncated = entry.payload_size > room;
    if (truncated) {
      out.problems.push_back("entry at " + hex(e) + ": payload of " + std::to_string(entry.payload_size) +
                             " bytes runs past its container (" + std::to_string(room) + " left)");
      entry.payload_size = room;
    }
    if (!entry.compressed && !truncated) {
      if (entry.kind == static_cast<std::uint16_t>(FatbinKind::cubin))
        entry.kernels = cubin_kernels(data + entry.payload_offset, entry.payload_size);
      else if (entry.kind == static_cast<std::uint16_t>(FatbinKind::ptx))
        entry.kernels = ptx_kernels(data + entry.payload_offset, entry.payload_size);
    }
    out.entries.push_back(entry);
    if (truncated) return;
    e = entry.payload_offset + entry.payload_size;  // header_size >= 64: always advances
  }
}

bool newer_arch(const FatbinEntry& a, const FatbinEntry* best) { return best == nullptr || a.sm_arch > best->sm_arch; }

// Parses the container whose header is at `off` (magic already checked) and returns the offset
// just past it; 0 when its header is unusable (the caller moves on by 8 bytes).
std::uint64_t parse_container(const std::uint8_t* data, std::size_t size, std::uint64_t off, bool embedded,
                              std::size_t max_entries, Fatbin& out) {
  const std::uint8_t* c = data + off;
  const std::uint16_t header_size = load<std::uint16_t>(c + 6);
  const std::uint64_t body = load<std::uint64_t>(c + 8);
  if (header_size < kContainerHeader || header_size > size - off) {
    out.problems.push_back("container at " + hex(off) + ": bad header size " + std::to_string(header_size));
    return 0;
  }
  const std::uint64_t begin = off + header_size;
  std::uint64_t end = begin;
  if (body > size - begin) {
    out.problems.push_back("container at " + hex(off) + ": size " + std::to_string(body) + " runs past the section (" +
                           std::to_string(size - begin) + " left)");
    end = size;
  } else {
    end = begin + body;
  }
  const std::size_t first = out.entries.size();
  parse_entries(data, begin, end, out.containers, max_entries, out);
  for (std::size_t i = first; i < out.entries.size(); ++i) out.entries[i].embedded = embedded;
  ++out.containers;
  if (embedded) ++out.embedded_containers;
  return end;
}

}  // namespace

bool arch_less(const std::string& a, const std::string& b) {
  auto split = [](const std::string& s) {
    std::size_t i = 0;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
    std::size_t j = i;
    long number = 0;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j])) && j - i < 9) number = number * 10 + (s[j++] - '0');
    return std::make_tuple(s.substr(0, i), j > i ? number : -1L, s.substr(j));
  };
  return split(a) < split(b);
}

std::string FatbinEntry::arch_name() const {
  const std::string n = std::to_string(sm_arch) + (arch_specific ? "a" : "");
  switch (kind) {
    case static_cast<std::uint16_t>(FatbinKind::cubin): return "sm_" + n;
    case static_cast<std::uint16_t>(FatbinKind::ptx): return "compute_" + n;
    case static_cast<std::uint16_t>(FatbinKind::lto_ir): return "lto_" + n;
    default: return "kind" + std::to_string(kind) + "_" + n;
  }
}

Fatbin parse_fatbin(const std::uint8_t* data, std::size_t size, std::size_t max_entries) {
  Fatbin out;
  if (data == nullptr) return out;
  std::uint64_t off = 0;
  bool scanning = false;  // between containers, looking for the next magic
  while (off < size && size - off >= kContainerHeader) {
    if (load<std::uint32_t>(data + off) != kFatbinMagic) {
      if (!scanning) out.problems.push_back("no container magic at " + hex(off) + ": scanning for the next one");
      scanning = true;
      out.skipped_bytes += 8;
      off += 8;
      continue;
    }
    scanning = false;
    const std::uint64_t end = parse_container(data, size, off, false, max_entries, out);
    if (out.entries.size() >= max_entries) break;
    if (end == 0) {
      out.skipped_bytes += 8;
      off += 8;
      continue;
    }
    const std::uint64_t next = align8(end);
    off = next > off ? next : off + 8;  // always advances, even on a zero-size container
  }
  return out;
}

void scan_embedded_fatbins(const std::uint8_t* data, std::size_t size, Fatbin& out, std::uint64_t file_offset,
                           std::size_t max_entries) {
  if (data == nullptr) return;
  // Only 8-aligned offsets (in the file, so in memory) can hold a container: step 8 bytes at a
  // time instead of searching every byte (this scan reads hundreds of MiB of data sections).
  std::uint64_t off = (8 - file_offset % 8) % 8;
  while (off < size && size - off >= kContainerHeader && out.entries.size() < max_entries) {
    while (off <= size - kContainerHeader && load<std::uint32_t>(data + off) != kFatbinMagic) off += 8;
    if (off > size - kContainerHeader) return;
    const std::uint64_t at = off;
    off = at + 8;  // always advances, stays aligned
    // A real container: version 1, 16-byte header, its size inside the section.
    if (load<std::uint16_t>(data + at + 4) != 1 || load<std::uint16_t>(data + at + 6) != kContainerHeader) continue;
    if (load<std::uint64_t>(data + at + 8) > size - at - kContainerHeader) continue;
    Fatbin one;  // parse alone: a match by chance that yields nothing usable is dropped
    parse_container(data, size, at, true, max_entries - out.entries.size(), one);
    if (!one.problems.empty() || one.entries.empty()) continue;
    for (auto& e : one.entries) e.container = out.containers;
    out.entries.insert(out.entries.end(), one.entries.begin(), one.entries.end());
    ++out.containers;
    ++out.embedded_containers;
    off = align8(file_offset + at + kContainerHeader + load<std::uint64_t>(data + at + 8)) - file_offset;
  }
}

Result<Fatbin> read_fatbin(const std::string& path, const ElfFacts& facts) {
  const Section* fatbin = nullptr;
  std::vector<const Section*> others;  // where libraries such as cuFFT keep more containers
  for (const auto& s : facts.sections) {
    if (s.name == ".nv_fatbin") {
      if (fatbin == nullptr) fatbin = &s;
    } else if (s.type == SHT_PROGBITS && (s.flags & SHF_ALLOC) != 0 && (s.flags & SHF_EXECINSTR) == 0 && s.size >= 16) {
      others.push_back(&s);
    }
  }
  if (fatbin != nullptr && fatbin->type == SHT_NOBITS)
    return make_error(path, ".nv_fatbin has no bytes in the file (SHT_NOBITS)");
  const OpenedFile opened = open_regular(path.c_str());  // never a FIFO or a device (bounded_read.h)
  if (opened.fd < 0)
    return make_error(path, opened.err != 0 ? std::string("cannot open: ") + std::strerror(opened.err) : open_problem(opened));
  const int fd = opened.fd;
  if (opened.size == 0) {
    close(fd);
    return Fatbin{};
  }
  const std::uint64_t file_size = opened.size;
  auto inside = [&](const Section* s) { return s->offset <= file_size && s->size <= file_size - s->offset; };
  if (fatbin != nullptr && !inside(fatbin)) {
    close(fd);
    return make_error(path, ".nv_fatbin lies outside the file");
  }
  void* map = mmap(nullptr, file_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED) return make_error(path, std::string("cannot mmap: ") + std::strerror(errno));
  const auto* bytes = static_cast<const std::uint8_t*>(map);
  Fatbin fb = fatbin != nullptr ? parse_fatbin(bytes + fatbin->offset, fatbin->size) : Fatbin{};
  for (const Section* s : others)
    if (inside(s)) scan_embedded_fatbins(bytes + s->offset, s->size, fb, s->offset);
  munmap(map, file_size);
  return fb;
}

const char* coverage_name(CoverageKind c) {
  switch (c) {
    case CoverageKind::sass: return "sass";
    case CoverageKind::ptx_jit: return "ptx_jit";
    case CoverageKind::none: return "none";
  }
  return "?";
}

bool cubin_runs_on(const FatbinEntry& entry, int sm) {
  if (entry.kind != static_cast<std::uint16_t>(FatbinKind::cubin) || sm <= 0) return false;
  const int arch = static_cast<int>(entry.sm_arch);
  if (entry.arch_specific) return arch == sm;
  return arch / 10 == sm / 10 && arch % 10 <= sm % 10;
}

bool ptx_jits_for(const FatbinEntry& entry, int sm) {
  if (entry.kind != static_cast<std::uint16_t>(FatbinKind::ptx) || sm <= 0) return false;
  const int arch = static_cast<int>(entry.sm_arch);
  return entry.arch_specific ? arch == sm : arch <= sm;
}

Coverage coverage_for(const Fatbin& fatbin, int sm, FatbinSource source) {
  Coverage cov;
  cov.sm = sm;
  std::set<std::string> sass, ptx;
  const FatbinEntry* best_sass = nullptr;
  const FatbinEntry* best_ptx = nullptr;
  std::size_t i = 0;
  const std::size_t n = fatbin.entries.size();
  while (i < n) {  // entries of one container are contiguous
    const int container = fatbin.entries[i].container;
    bool considered = false, code = false, runs = false;
    const FatbinEntry* jit = nullptr;
    for (; i < n && fatbin.entries[i].container == container; ++i) {
      const FatbinEntry& e = fatbin.entries[i];
      if (source == FatbinSource::registered && e.embedded) continue;
      if (source == FatbinSource::embedded && !e.embedded) continue;
      considered = true;
      if (e.kernels == KernelPresence::none) continue;  // an empty cubin or PTX: nothing to run
      if (e.kind == static_cast<std::uint16_t>(FatbinKind::cubin)) {
        code = true;
        sass.insert(e.arch_name());
        if (cubin_runs_on(e, sm)) {
          runs = true;
          if (newer_arch(e, best_sass)) best_sass = &e;
        }
      } else if (e.kind == static_cast<std::uint16_t>(FatbinKind::ptx)) {
        code = true;
        ptx.insert(e.arch_name());
        if (ptx_jits_for(e, sm) && newer_arch(e, jit)) jit = &e;  // the driver JITs the newest usable PTX
      }
    }
    if (!code) {
      if (considered) ++cov.containers_empty;
      continue;
    }
    ++cov.containers;
    if (runs) {
      ++cov.containers_sass;
    } else if (jit != nullptr) {
      ++cov.containers_ptx_only;
      cov.ptx_jit_bytes += jit->uncompressed_size;
      if (newer_arch(*jit, best_ptx)) best_ptx = jit;
    } else {
      ++cov.containers_none;
    }
  }
  cov.kind = cov.containers_sass > 0 ? CoverageKind::sass : cov.containers_ptx_only > 0 ? CoverageKind::ptx_jit : CoverageKind::none;
  cov.sass_archs.assign(sass.begin(), sass.end());
  cov.ptx_archs.assign(ptx.begin(), ptx.end());
  std::sort(cov.sass_archs.begin(), cov.sass_archs.end(), arch_less);
  std::sort(cov.ptx_archs.begin(), cov.ptx_archs.end(), arch_less);
  if (best_sass != nullptr) cov.best_sass = best_sass->arch_name();
  if (best_ptx != nullptr) cov.best_ptx = best_ptx->arch_name();
  return cov;
}

FatbinBytes fatbin_bytes(const Fatbin& fatbin, int sm, FatbinSource source) {
  FatbinBytes out;
  out.sm = sm;
  std::map<std::string, ArchBytes> by_arch;
  auto stored = [](const FatbinEntry& e) -> std::uint64_t {
    return e.compressed && e.compressed_size != 0 ? e.compressed_size : e.payload_size;
  };
  std::size_t i = 0;
  const std::size_t n = fatbin.entries.size();
  while (i < n) {  // entries of one container are contiguous
    const int container = fatbin.entries[i].container;
    const FatbinEntry* sass = nullptr;
    const FatbinEntry* ptx = nullptr;
    for (; i < n && fatbin.entries[i].container == container; ++i) {
      const FatbinEntry& e = fatbin.entries[i];
      if ((source == FatbinSource::registered && e.embedded) || (source == FatbinSource::embedded && !e.embedded)) continue;
      ArchBytes& a = by_arch[e.arch_name()];
      a.kind = e.kind;
      ++a.entries;
      a.stored_bytes += stored(e);
      a.uncompressed_bytes += e.uncompressed_size;
      out.stored_bytes += stored(e);
      out.uncompressed_bytes += e.uncompressed_size;
      if (e.kind == static_cast<std::uint16_t>(FatbinKind::cubin)) out.sass_stored_bytes += stored(e);
      if (e.kind == static_cast<std::uint16_t>(FatbinKind::ptx)) out.ptx_stored_bytes += stored(e);
      if (cubin_runs_on(e, sm) && newer_arch(e, sass)) sass = &e;
      if (ptx_jits_for(e, sm) && newer_arch(e, ptx)) ptx = &e;
    }
    if (const FatbinEntry* used = sass != nullptr ? sass : ptx) {
      ArchBytes& a = by_arch[used->arch_name()];
      ++a.used_entries;
      a.used_stored_bytes += stored(*used);
      a.used_uncompressed_bytes += used->uncompressed_size;
      out.used_stored_bytes += stored(*used);
      out.used_uncompressed_bytes += used->uncompressed_size;
    }
  }
  for (auto& [name, a] : by_arch) {
    a.arch = name;
    out.archs.push_back(std::move(a));
  }
  std::sort(out.archs.begin(), out.archs.end(), [](const ArchBytes& x, const ArchBytes& y) { return arch_less(x.arch, y.arch); });
  return out;
}

}  // namespace cudashim::symbols
