// debug_lines.h: source file and line of an address in an ELF file, from its DWARF
// line tables (libdw). For the CLI only: libdw is never linked into the preload
// library (cudashim_debuginfo, symbols/CMakeLists.txt).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "symbols/result.h"

namespace cudashim::symbols {

struct SourceLine {
  std::string file;  // as the line table names it (absolute when the compiler recorded its folder)
  int line = 0;
  int column = 0;    // 0 when not recorded
};

// One ELF file and the DWARF that describes it: its own .debug_* sections, else a
// separate debug file found by build-id (<debug_root>/.build-id/xx/rest.debug) or by
// .gnu_debuglink (next to the file, in its .debug/ folder, or under <debug_root>).
class DebugLines {
 public:
  // Opens `path`. An error names the file (missing, unreadable, not ELF); a file
  // without any DWARF opens fine and has has_dwarf() false.
  static Result<DebugLines> open(const std::string& path, const std::string& debug_root = "/usr/lib/debug");

  DebugLines(DebugLines&&) noexcept;
  DebugLines& operator=(DebugLines&&) noexcept;
  ~DebugLines();

  // The GNU build-id of `path` in hex; "" when it has none.
  const std::string& build_id() const;
  // True when line tables were found; debug_file() names the file they came from.
  bool has_dwarf() const;
  const std::string& debug_file() const;

  // The line of the instruction at link-time address `address` (for a return
  // address, pass it minus one); nullopt when no line table covers it.
  std::optional<SourceLine> line_at(std::uint64_t address) const;

 private:
  struct Impl;
  explicit DebugLines(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cudashim::symbols
