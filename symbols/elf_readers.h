// Internal to the symbols layer: the readers read_elf() is assembled from.
// Each reads one part of an open ElfHandle; all bound their loops by the data
// they walk and check every libelf return.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/elf_handle.h"

namespace cudashim::symbols::detail {

// A section found by type, with its header.
struct FoundSection {
  Elf_Scn* scn = nullptr;
  GElf_Shdr shdr{};
};

// The first section of type `sh_type`, or nullopt; an error on an unreadable header.
Result<std::optional<FoundSection>> find_section_by_type(const ElfHandle& h, GElf_Word sh_type);

// The first section named `name`, or nullopt; an error on an unreadable header or name.
Result<std::optional<FoundSection>> find_section_by_name(const ElfHandle& h, const std::string& name);

// All section headers (index 0 included), with their names.
Result<std::vector<Section>> read_sections(const ElfHandle& h);

// The PT_INTERP string, "" when there is none.
Result<std::string> read_interp(const ElfHandle& h);

// The string-valued facts of the dynamic section.
struct DynamicInfo {
  std::string soname;
  std::vector<std::string> needed;
  std::string rpath;
  std::string runpath;
};

// DT_SONAME/DT_NEEDED/DT_RPATH/DT_RUNPATH from SHT_DYNAMIC, or from PT_DYNAMIC
// when the file has no section headers; empty when there is neither.
Result<DynamicInfo> read_dynamic(const ElfHandle& h);

// .gnu.version_d entries, in file order; empty when there is none.
Result<std::vector<VersionDefinition>> read_version_definitions(const ElfHandle& h);

// .gnu.version_r entries, in file order; empty when there is none.
Result<std::vector<VersionNeed>> read_version_needs(const ElfHandle& h);

// .dynsym entries (index 0 left out) with versions resolved through `defs`/`needs`.
Result<std::vector<DynamicSymbol>> read_dynamic_symbols(const ElfHandle& h,
                                                        const std::vector<VersionDefinition>& defs,
                                                        const std::vector<VersionNeed>& needs);

}  // namespace cudashim::symbols::detail

namespace cudashim::symbols::detail {

// The first program header of type `p_type`, or nullopt; an error on an unreadable one.
Result<std::optional<GElf_Phdr>> find_segment(const ElfHandle& h, GElf_Word p_type);

// The file offset that virtual address `addr` is loaded from (through PT_LOAD),
// or nullopt when no PT_LOAD segment holds it in the file.
Result<std::optional<std::uint64_t>> vaddr_to_offset(const ElfHandle& h, std::uint64_t addr);

// A NUL-terminated string at `offset` in `bytes`, which holds `size` bytes;
// nullopt when the offset is out of range or no NUL follows it.
std::optional<std::string> string_in(const char* bytes, std::size_t size, std::uint64_t offset);

}  // namespace cudashim::symbols::detail
