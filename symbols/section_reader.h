// Reading the raw file bytes of one named section (e.g. ".nv_fatbin").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/result.h"

namespace cudashim::symbols {

// The bytes of the first section called `name` in the ELF file at `path`, as
// stored in the file (no decompression). Errors: no such section, SHT_NOBITS,
// bytes outside the file, or sh_size over `max_bytes` (nothing is read then).
Result<std::vector<std::uint8_t>> read_section(const std::string& path, std::string_view name,
                                               std::size_t max_bytes);

}  // namespace cudashim::symbols
