#include "symbols/version_check.h"

#include <elf.h>

#include <charconv>
#include <unordered_map>
#include <unordered_set>

#include "symbols/exports.h"

namespace cudashim::symbols {
namespace {

// What one object defines, indexed for lookups: "name@version" keys, and plain names when the
// object has no version definitions (glibc's check_match accepts those for any version).
struct DefinedIndex {
  std::unordered_set<std::string> versioned;
  std::unordered_set<std::string> names;
  bool unversioned_object = false;
  std::unordered_set<std::string> nodes;  // verdef names, the base one included

  explicit DefinedIndex(const ElfFacts& obj) : unversioned_object(obj.version_definitions.empty()) {
    for (const auto& d : obj.version_definitions) nodes.insert(d.name);
    for (const auto& s : obj.dynamic_symbols) {
      if (!is_exported(s)) continue;
      if (unversioned_object)
        names.insert(s.name);
      else
        versioned.insert(s.name + "@" + s.version);
    }
  }
  bool satisfies(const std::string& name, const std::string& version) const {
    return unversioned_object ? names.count(name) != 0 : versioned.count(name + "@" + version) != 0;
  }
};

bool is_function(std::uint8_t type) { return type == STT_FUNC || type == STT_GNU_IFUNC; }

std::string level_text(const ApiLevel& l) { return std::to_string(l.major) + "." + std::to_string(l.minor); }

}  // namespace

std::optional<ApiLevel> nvjitlink_api_level(std::string_view symbol) {
  constexpr std::string_view kPrefix = "__nvJitLink";
  if (symbol.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  const std::size_t last = symbol.rfind('_');
  if (last == std::string_view::npos || last == 0) return std::nullopt;
  const std::size_t prev = symbol.rfind('_', last - 1);
  if (prev == std::string_view::npos || prev < kPrefix.size()) return std::nullopt;
  ApiLevel level;
  const char* b = symbol.data();
  auto r1 = std::from_chars(b + prev + 1, b + last, level.major);
  auto r2 = std::from_chars(b + last + 1, b + symbol.size(), level.minor);
  if (r1.ec != std::errc() || r1.ptr != b + last || r2.ec != std::errc() || r2.ptr != b + symbol.size())
    return std::nullopt;
  return level;
}

std::optional<ApiLevel> nvjitlink_max_level(const ElfFacts& lib) {
  std::optional<ApiLevel> best;
  for (const auto& s : lib.dynamic_symbols) {
    if (!is_exported(s)) continue;
    auto level = nvjitlink_api_level(s.name);
    if (level && (!best || *best < *level)) best = level;
  }
  return best;
}

std::vector<VersionShortfall> check_versions(const ElfFacts& lib, const std::vector<Provider>& providers,
                                             const std::vector<const ElfFacts*>& scope) {
  std::vector<VersionShortfall> out;
  std::unordered_map<std::string, const Provider*> by_file;
  for (const auto& p : providers) by_file.emplace(p.file, &p);
  std::unordered_map<const ElfFacts*, DefinedIndex> indexes;  // built on first use
  auto index_of = [&](const ElfFacts* obj) -> const DefinedIndex& {
    auto it = indexes.find(obj);
    if (it == indexes.end()) it = indexes.emplace(obj, DefinedIndex(*obj)).first;
    return it->second;
  };
  auto base = [&](ShortfallKind kind, const std::string& file, const Provider* p) {
    VersionShortfall s{kind, lib.path, "", "", file, "", {}, false, false, ""};
    if (p != nullptr) {
      s.provider = p->resolution.path;
      s.resolution = p->resolution;
    } else {
      s.resolution.name = file;
    }
    return s;
  };

  // The VERNEED check the loader makes when it maps `lib`.
  std::unordered_set<std::string> unchecked_files;  // providers already reported as not found
  std::unordered_set<std::string> missing_nodes;    // "file@version" already reported missing
  std::unordered_map<std::uint16_t, std::pair<const std::string*, bool>> needed_index;  // index -> (file, weak)
  for (const auto& need : lib.version_needs) {
    auto it = by_file.find(need.file);
    const Provider* p = it == by_file.end() ? nullptr : it->second;
    for (const auto& v : need.versions) needed_index.emplace(v.index, std::make_pair(&need.file, v.weak));
    if (p == nullptr || p->facts == nullptr) {
      auto s = base(ShortfallKind::provider_not_found, need.file, p);
      out.push_back(std::move(s));
      unchecked_files.insert(need.file);
      continue;
    }
    const DefinedIndex& idx = index_of(p->facts);
    for (const auto& v : need.versions) {
      if (idx.nodes.count(v.name) != 0) continue;
      auto s = base(ShortfallKind::missing_version, need.file, p);
      missing_nodes.insert(need.file + "@" + v.name);
      s.version = v.name;
      s.weak = v.weak;
      if (idx.unversioned_object)
        s.note = p->resolution.path + " has no symbol versions at all: the version check lets it pass, then the "
                 "first versioned lookup aborts the process (\"Inconsistency detected by ld.so: dl-lookup.c: "
                 "check_match: Assertion ... failed\")";
      out.push_back(std::move(s));
    }
  }

  // The symbol binding: name@V must be defined by the provider (or any object in scope).
  for (const auto& sym : lib.dynamic_symbols) {
    if (sym.defined || sym.version.empty()) continue;
    auto ni = needed_index.find(sym.version_index);
    if (ni == needed_index.end()) continue;  // not a VERNEED version (e.g. a local index)
    const std::string& file = *ni->second.first;
    if (unchecked_files.count(file) != 0 || missing_nodes.count(file + "@" + sym.version) != 0) continue;
    const Provider* p = by_file.at(file);
    if (index_of(p->facts).satisfies(sym.name, sym.version)) continue;
    bool elsewhere = false;
    for (const ElfFacts* obj : scope)
      if (obj != nullptr && obj != p->facts && obj != &lib && index_of(obj).satisfies(sym.name, sym.version)) {
        elsewhere = true;
        break;
      }
    if (elsewhere) continue;
    auto s = base(ShortfallKind::missing_symbol, file, p);
    s.symbol = sym.name;
    s.version = sym.version;
    s.weak = sym.binding == STB_WEAK || ni->second.second;
    s.is_function = is_function(sym.type);
    if (auto need = nvjitlink_api_level(sym.name)) {
      auto have = nvjitlink_max_level(*p->facts);
      s.note = "nvJitLink encodes the minimum version it needs in the symbol name: this library needs nvJitLink >= " +
               level_text(*need) + "; " + p->resolution.path +
               (have ? " provides API level " + level_text(*have) : std::string(" provides no versioned entry points"));
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<VersionShortfall> check_versions_in_tree(const LoadTree& tree, int index) {
  if (index < 0 || index >= static_cast<int>(tree.objects.size()) || !tree.objects[index].facts) return {};
  const ElfFacts& lib = *tree.objects[index].facts;
  std::vector<Provider> providers;
  for (const auto& need : lib.version_needs) {
    Provider p;
    p.file = need.file;
    const int at = tree.find(need.file);
    if (at >= 0) {
      const auto& obj = tree.objects[at];
      p.resolution = obj.resolution;
      if (obj.facts) p.facts = obj.facts.get();
    } else {
      p.resolution.name = need.file;  // a VERNEED file that is not a DT_NEEDED of anything loaded
    }
    providers.push_back(std::move(p));
  }
  std::vector<const ElfFacts*> scope;
  for (const auto& obj : tree.objects)
    if (obj.facts) scope.push_back(obj.facts.get());
  return check_versions(lib, providers, scope);
}

std::string describe(const VersionShortfall& s) {
  switch (s.kind) {
    case ShortfallKind::provider_not_found:
      return s.needed_file + ": cannot open shared object file: No such file or directory";
    case ShortfallKind::missing_version:
      return "version `" + s.version + "' not found (required by " + s.library + ")";
    case ShortfallKind::missing_symbol:
      return "undefined symbol: " + s.symbol + ", version " + s.version;
  }
  return "";
}

}  // namespace cudashim::symbols
