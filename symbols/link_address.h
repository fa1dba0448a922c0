// link_address.h: a place in an ELF file, as a file offset (what /proc/self/maps gives a
// crash handler), turned into the link-time address that symbol tables and DWARF use.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace cudashim::symbols {

// The link-time (ELF virtual) address loaded from `file_offset` of the file at `path`,
// through its PT_LOAD segments; nullopt when the file cannot be read as ELF or no
// PT_LOAD segment holds that offset. Never throws.
std::optional<std::uint64_t> link_address_of_offset(const std::string& path, std::uint64_t file_offset);

}  // namespace cudashim::symbols
