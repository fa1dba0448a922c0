// debug_lines.cpp: DWARF line tables through libdw (linked statically, CLI only).
#include "symbols/debug_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>

#include <cstdio>
#include <filesystem>
#include <vector>

#include "symbols/elf_handle.h"

namespace cudashim::symbols {

struct DebugLines::Impl {
  detail::ElfHandle file;
  std::optional<detail::ElfHandle> separate;  // the debug file, when the DWARF is not in `file`
  Dwarf* dwarf = nullptr;
  std::string build_id;
  std::string debug_file;

  explicit Impl(detail::ElfHandle f) : file(std::move(f)) {}
  ~Impl() {
    if (dwarf != nullptr) dwarf_end(dwarf);
  }
};

namespace {

std::string hex_of(const void* bytes, ssize_t n) {
  std::string out;
  char two[3];
  for (ssize_t i = 0; i < n; ++i) {
    std::snprintf(two, sizeof two, "%02x", static_cast<const unsigned char*>(bytes)[i]);
    out += two;
  }
  return out;
}

std::string build_id_of(Elf* elf) {
  const void* id = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
  return n > 0 ? hex_of(id, n) : std::string();
}

// Where a separate debug file may be, in the order GDB's documentation gives:
// by build-id first, then by the .gnu_debuglink name.
std::vector<std::string> debug_candidates(const detail::ElfHandle& h, const std::string& build_id,
                                          const std::string& root) {
  std::vector<std::string> out;
  if (build_id.size() > 2)
    out.push_back(root + "/.build-id/" + build_id.substr(0, 2) + "/" + build_id.substr(2) + ".debug");
  GElf_Word crc = 0;
  if (const char* link = dwelf_elf_gnu_debuglink(h.elf(), &crc); link != nullptr && *link != '\0') {
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::absolute(h.path(), ec).parent_path();
    out.push_back((dir / link).string());
    out.push_back((dir / ".debug" / link).string());
    out.push_back(root + dir.string() + "/" + link);
  }
  return out;
}

}  // namespace

DebugLines::DebugLines(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
DebugLines::DebugLines(DebugLines&&) noexcept = default;
DebugLines& DebugLines::operator=(DebugLines&&) noexcept = default;
DebugLines::~DebugLines() = default;

Result<DebugLines> DebugLines::open(const std::string& path, const std::string& debug_root) {
  auto opened = detail::ElfHandle::open(path);
  if (!opened.ok()) return opened.to_error();
  auto impl = std::make_unique<Impl>(std::move(opened).value());
  impl->build_id = build_id_of(impl->file.elf());
  // dwarf_begin_elf fails (DWARF_E_NO_DWARF) when the file has no debug sections: a
  // stripped or plain release build. Then look for a separate debug file.
  impl->dwarf = dwarf_begin_elf(impl->file.elf(), DWARF_C_READ, nullptr);
  if (impl->dwarf != nullptr) {
    impl->debug_file = path;
  } else {
    for (const std::string& candidate : debug_candidates(impl->file, impl->build_id, debug_root)) {
      std::error_code ec;
      if (candidate == path || !std::filesystem::is_regular_file(candidate, ec)) continue;
      auto dbg = detail::ElfHandle::open(candidate);
      if (!dbg.ok()) continue;
      // A debug file for another build would give wrong lines: skip it unless the ids agree.
      const std::string dbg_id = build_id_of(dbg.value().elf());
      if (!impl->build_id.empty() && dbg_id != impl->build_id) continue;
      impl->separate.emplace(std::move(dbg).value());
      impl->dwarf = dwarf_begin_elf(impl->separate->elf(), DWARF_C_READ, nullptr);
      if (impl->dwarf != nullptr) {
        impl->debug_file = candidate;
        break;
      }
      impl->separate.reset();
    }
  }
  return DebugLines(std::move(impl));
}

const std::string& DebugLines::build_id() const { return impl_->build_id; }
bool DebugLines::has_dwarf() const { return impl_->dwarf != nullptr; }
const std::string& DebugLines::debug_file() const { return impl_->debug_file; }

std::optional<SourceLine> DebugLines::line_at(std::uint64_t address) const {
  if (impl_->dwarf == nullptr) return std::nullopt;
  Dwarf_Die cu_die;
  Dwarf_Die* found = dwarf_addrdie(impl_->dwarf, address, &cu_die);
  if (found == nullptr) {
    // No .debug_aranges entry (clang omits the section by default): ask each unit.
    Dwarf_CU* cu = nullptr;
    Dwarf_Half version = 0;
    uint8_t unit_type = 0;
    Dwarf_Die die;
    while (dwarf_get_units(impl_->dwarf, cu, &cu, &version, &unit_type, &die, nullptr) == 0) {
      if (dwarf_haspc(&die, address) == 1) {
        cu_die = die;
        found = &cu_die;
        break;
      }
    }
  }
  if (found == nullptr) return std::nullopt;
  Dwarf_Line* row = dwarf_getsrc_die(found, address);
  if (row == nullptr) return std::nullopt;
  SourceLine out;
  const char* file = dwarf_linesrc(row, nullptr, nullptr);
  if (file == nullptr || dwarf_lineno(row, &out.line) != 0 || out.line <= 0) return std::nullopt;
  out.file = file;
  // A name relative to the compiler's working folder (g++ run on a relative path):
  // the unit's DW_AT_comp_dir makes it a path people can open.
  Dwarf_Attribute attr;
  const char* comp_dir = dwarf_formstring(dwarf_attr(found, DW_AT_comp_dir, &attr));
  if (!out.file.empty() && out.file[0] != '/' && comp_dir != nullptr && comp_dir[0] == '/')
    out.file = (std::filesystem::path(comp_dir) / out.file).lexically_normal().string();
  if (dwarf_linecol(row, &out.column) != 0) out.column = 0;
  return out;
}

}  // namespace cudashim::symbols
