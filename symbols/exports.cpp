#include "symbols/exports.h"

#include <elf.h>

#include <algorithm>
#include <unordered_map>

namespace cudashim::symbols {
namespace {

// Needed version index -> file that .gnu.version_r lists it under.
std::unordered_map<std::uint16_t, const std::string*> needed_files(const ElfFacts& facts) {
  std::unordered_map<std::uint16_t, const std::string*> files;
  for (const auto& need : facts.version_needs)
    for (const auto& v : need.versions) files.emplace(v.index, &need.file);
  return files;
}

}  // namespace

bool is_exported(const DynamicSymbol& sym) {
  return sym.defined &&
         (sym.binding == STB_GLOBAL || sym.binding == STB_WEAK || sym.binding == STB_GNU_UNIQUE);
}

std::vector<std::string> defined_dynamic_symbols(const ElfFacts& facts) {
  std::vector<std::string> names;
  for (const auto& sym : facts.dynamic_symbols)
    if (is_exported(sym)) names.push_back(sym.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

bool defines(const ElfFacts& facts, std::string_view name, std::string_view version) {
  return std::any_of(facts.dynamic_symbols.begin(), facts.dynamic_symbols.end(), [&](const DynamicSymbol& sym) {
    return is_exported(sym) && sym.name == name && (version.empty() || sym.version == version);
  });
}

std::vector<UndefinedVersioned> undefined_versioned(const ElfFacts& facts) {
  auto files = needed_files(facts);
  std::vector<UndefinedVersioned> out;
  for (const auto& sym : facts.dynamic_symbols) {
    if (sym.defined || sym.version.empty()) continue;
    auto it = files.find(sym.version_index);
    out.push_back({sym.name, sym.version, it != files.end() ? *it->second : std::string()});
  }
  return out;
}

}  // namespace cudashim::symbols
