// Versioned-symbol shortfalls: what a library requires through .gnu.version_r and its
// versioned undefined symbols, checked against the file the loader will really bind.
// glibc's rules (elf/dl-version.c match_symbol, elf/dl-lookup.c check_match):
//   - each VERNEED version must be a version node (verdef) of the provider, else the load
//     fails: "version `V' not found (required by L)"; a VER_FLG_WEAK one only warns;
//     a provider with no symbol versions at all passes that check, but the first lookup of
//     a symbol versioned for it trips an assertion in check_match that aborts the process
//     (seen with glibc 2.36), so it counts as missing the version too;
//   - each undefined name@V must be defined as name@V (hidden or default) by an object in
//     scope (or unversioned by an object without symbol versions, other than the provider), else "undefined symbol: name, version V": at load time for data and with
//     RTLD_NOW/BIND_NOW, at the first call otherwise. A weak undefined symbol may stay unbound.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/loader_search.h"

namespace cudashim::symbols {

enum class ShortfallKind {
  provider_not_found,  // the loader finds no file for the needed name
  missing_version,     // the provider has no version node V (VERNEED check)
  missing_symbol,      // the provider has node V but no name@V
};

// One requirement the provider the loader picks does not meet.
struct VersionShortfall {
  ShortfallKind kind;
  std::string library;     // path of the needing file
  std::string symbol;      // "" for a missing_version / provider_not_found finding
  std::string version;     // e.g. "libnvJitLink.so.12", "GLIBC_2.38"
  std::string needed_file; // the VERNEED file name, e.g. "libnvJitLink.so.12"
  std::string provider;    // path the loader picks; "" when not found
  Resolution resolution;   // why the loader picks it (reason, every folder tried)
  bool weak = false;       // VER_FLG_WEAK version / STB_WEAK symbol: a warning for the loader
  bool is_function = false;  // STT_FUNC/STT_GNU_IFUNC: lazily bound, fails at the first call
  std::string note;        // special knowledge, e.g. nvJitLink's minimum minor
};

// The provider of one VERNEED file, as the loader binds it.
struct Provider {
  std::string file;          // the needed name, e.g. "libnvJitLink.so.12"
  Resolution resolution;     // where the loader finds it
  const ElfFacts* facts = nullptr;  // nullptr when not found or unreadable
};

// Checks every VERNEED entry and every versioned undefined symbol of `lib` against
// `providers` (one per VERNEED file; a missing one counts as not found). `scope` are further
// objects of the process that may define a versioned symbol too (glibc searches them all).
std::vector<VersionShortfall> check_versions(const ElfFacts& lib, const std::vector<Provider>& providers,
                                             const std::vector<const ElfFacts*>& scope = {});

// check_versions for object `index` of `tree`, with the tree's bindings as providers and
// every object of the tree as scope.
std::vector<VersionShortfall> check_versions_in_tree(const LoadTree& tree, int index);

// nvJitLink encodes the minimum minor it needs in each entry point's name:
// "__nvJitLinkAddData_12_3" -> {12, 3}; nullopt for any other name.
struct ApiLevel {
  int major = 0, minor = 0;
  bool operator<(const ApiLevel& o) const { return major != o.major ? major < o.major : minor < o.minor; }
  bool operator==(const ApiLevel& o) const = default;
};
std::optional<ApiLevel> nvjitlink_api_level(std::string_view symbol);

// The highest nvJitLink API level `lib` defines (its "__nvJitLink*_M_N" symbols); nullopt if none.
std::optional<ApiLevel> nvjitlink_max_level(const ElfFacts& lib);

// One line for a shortfall, e.g. "undefined symbol: __nvJitLinkAddData_12_3, version
// libnvJitLink.so.12" (the loader's own words).
std::string describe(const VersionShortfall& s);

}  // namespace cudashim::symbols
