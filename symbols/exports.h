// Questions about what an ElfFacts exports and imports through its dynamic symbols.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "symbols/elf_file.h"

namespace cudashim::symbols {

// True for a defined dynamic symbol that other objects can bind to:
// st_shndx != SHN_UNDEF and binding GLOBAL, WEAK or GNU_UNIQUE.
bool is_exported(const DynamicSymbol& sym);

// Names of the exported dynamic symbols (see is_exported), sorted and unique.
std::vector<std::string> defined_dynamic_symbols(const ElfFacts& facts);

// Is `name` exported with version `version`? An empty `version` matches any
// version (and unversioned symbols); hidden (name@ver) versions count too.
bool defines(const ElfFacts& facts, std::string_view name, std::string_view version = {});

// An undefined dynamic symbol that carries a version, and the needed file that
// .gnu.version_r says provides that version ("" if no verneed declares it).
struct UndefinedVersioned {
  std::string name;     // e.g. "dlsym"
  std::string version;  // e.g. "GLIBC_2.34"
  std::string file;     // e.g. "libc.so.6"
  bool operator==(const UndefinedVersioned&) const = default;
};

// The undefined, versioned dynamic symbols, in symbol-table order.
std::vector<UndefinedVersioned> undefined_versioned(const ElfFacts& facts);

}  // namespace cudashim::symbols
