// ElfFacts: what the symbols layer knows about one ELF file, read with libelf.
// Numeric fields hold the raw ELF values; compare them with the constants of
// <elf.h> (ET_DYN, EM_X86_64, STB_GLOBAL, STT_FUNC, SHT_PROGBITS, ...).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "symbols/result.h"

namespace cudashim::symbols {

// One entry of .dynsym (the null symbol at index 0 is left out).
struct DynamicSymbol {
  std::string name;
  std::string version;           // "" when unversioned (versym 0/1) or unknown index
  bool default_version = false;  // defined and shown as name@@version (hidden bit clear)
  bool defined = false;          // st_shndx != SHN_UNDEF
  std::uint8_t binding = 0;      // STB_*
  std::uint8_t type = 0;         // STT_*
  std::uint16_t version_index = 0;  // .gnu.version value without the hidden bit; 0 without versym
  std::uint64_t value = 0;
  std::uint64_t size = 0;
};

// One entry of .gnu.version_d.
struct VersionDefinition {
  std::string name;                  // first verdaux name
  std::uint16_t index = 0;           // vd_ndx, the value symbols carry in .gnu.version
  bool is_base = false;              // VER_FLG_BASE: the file's own name (usually the soname)
  std::vector<std::string> parents;  // further verdaux names (the versions this one inherits)
};

// One version required from a needed file (one vernaux of .gnu.version_r).
struct NeededVersion {
  std::string name;         // e.g. "GLIBC_2.34"
  std::uint16_t index = 0;  // vna_other, the value symbols carry in .gnu.version
  bool weak = false;        // VER_FLG_WEAK
};

// One file entry of .gnu.version_r: e.g. libc.so.6 -> GLIBC_2.2.5, GLIBC_2.34.
struct VersionNeed {
  std::string file;
  std::vector<NeededVersion> versions;
};

// One section header.
struct Section {
  std::string name;
  std::uint32_t type = 0;  // SHT_*
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint64_t flags = 0;  // SHF_*
};

struct ElfFacts {
  std::string path;
  int elf_class = 0;           // 32 or 64
  std::uint16_t machine = 0;   // EM_*
  std::uint16_t type = 0;      // ET_*
  std::string soname;          // DT_SONAME, "" if none
  std::vector<std::string> needed;  // DT_NEEDED in file order
  std::string rpath;           // DT_RPATH, raw (unexpanded $ORIGIN etc.), "" if none
  std::string runpath;         // DT_RUNPATH, raw, "" if none
  std::string interp;          // PT_INTERP, "" if none
  std::vector<DynamicSymbol> dynamic_symbols;
  std::vector<VersionDefinition> version_definitions;
  std::vector<VersionNeed> version_needs;
  std::vector<Section> sections;
};

// Reads the facts of the ELF file at `path`. Never throws; on a missing,
// non-ELF, truncated or corrupt file the error names the file and the problem.
Result<ElfFacts> read_elf(const std::string& path);

}  // namespace cudashim::symbols
