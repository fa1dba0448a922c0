// The dynamic symbol table (.dynsym) with versions from .gnu.version.
#include <climits>
#include <unordered_map>

#include "symbols/elf_readers.h"

namespace cudashim::symbols::detail {
namespace {

constexpr std::uint16_t kVersymHidden = 0x8000;
constexpr std::uint16_t kVersymIndexMask = 0x7fff;

// Version index -> name, separately for definitions and needs (a defined
// symbol looks in the definitions first, an undefined one in the needs first).
struct VersionIndex {
  std::unordered_map<std::uint16_t, const std::string*> defined;
  std::unordered_map<std::uint16_t, const std::string*> needed;

  const std::string* find(std::uint16_t index, bool is_defined) const {
    const auto& first = is_defined ? defined : needed;
    const auto& second = is_defined ? needed : defined;
    if (auto it = first.find(index); it != first.end()) return it->second;
    if (auto it = second.find(index); it != second.end()) return it->second;
    return nullptr;
  }
};

VersionIndex index_versions(const std::vector<VersionDefinition>& defs, const std::vector<VersionNeed>& needs) {
  VersionIndex index;
  for (const auto& def : defs) index.defined.emplace(def.index, &def.name);
  for (const auto& need : needs)
    for (const auto& v : need.versions) index.needed.emplace(v.index, &v.name);
  return index;
}

// The symbol table section and its optional versym section.
struct SymbolTables {
  Elf_Data* symbols = nullptr;
  std::size_t strtab = 0;
  std::size_t count = 0;
  Elf_Data* versyms = nullptr;
};

Result<SymbolTables> symbol_tables(const ElfHandle& h) {
  SymbolTables t;
  auto dynsym = find_section_by_type(h, SHT_DYNSYM);
  if (!dynsym.ok()) return dynsym.to_error();
  if (!dynsym.value()) return t;
  auto data = section_data(h, dynsym.value()->scn, dynsym.value()->shdr, ".dynsym");
  if (!data.ok()) return data.to_error();
  std::size_t entsize = gelf_fsize(h.elf(), ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return h.error("cannot size symbols: " + libelf_message());
  t.symbols = data.value();
  t.strtab = dynsym.value()->shdr.sh_link;
  t.count = t.symbols->d_size / entsize;
  if (t.count > static_cast<std::size_t>(INT_MAX)) return h.error(".dynsym too large");

  auto versym = find_section_by_type(h, SHT_GNU_versym);
  if (!versym.ok()) return versym.to_error();
  if (!versym.value()) return t;
  auto vdata = section_data(h, versym.value()->scn, versym.value()->shdr, ".gnu.version");
  if (!vdata.ok()) return vdata.to_error();
  if (vdata.value()->d_size / sizeof(GElf_Versym) < t.count)
    return h.error(".gnu.version has fewer entries than .dynsym has symbols");
  t.versyms = vdata.value();
  return t;
}

// Fills the version fields of `sym` from its .gnu.version entry `raw`.
void apply_version(DynamicSymbol& sym, std::uint16_t raw, const VersionIndex& versions) {
  sym.version_index = raw & kVersymIndexMask;
  if (sym.version_index <= VER_NDX_GLOBAL) return;
  const std::string* name = versions.find(sym.version_index, sym.defined);
  if (name == nullptr) return;  // undeclared index: left unversioned
  sym.version = *name;
  sym.default_version = sym.defined && (raw & kVersymHidden) == 0;
}

Result<DynamicSymbol> read_symbol(const ElfHandle& h, const SymbolTables& t, std::size_t i,
                                  const VersionIndex& versions) {
  GElf_Sym sym{};
  if (gelf_getsym(t.symbols, static_cast<int>(i), &sym) == nullptr)
    return h.error("cannot read dynamic symbol " + std::to_string(i) + ": " + libelf_message());
  auto name = string_at(h, t.strtab, sym.st_name, "the name of dynamic symbol " + std::to_string(i));
  if (!name.ok()) return name.to_error();
  DynamicSymbol out;
  out.name = std::move(name.value());
  out.defined = sym.st_shndx != SHN_UNDEF;
  out.binding = GELF_ST_BIND(sym.st_info);
  out.type = GELF_ST_TYPE(sym.st_info);
  out.value = sym.st_value;
  out.size = sym.st_size;
  if (t.versyms != nullptr) {
    GElf_Versym raw = 0;
    if (gelf_getversym(t.versyms, static_cast<int>(i), &raw) == nullptr)
      return h.error("cannot read .gnu.version entry " + std::to_string(i) + ": " + libelf_message());
    apply_version(out, raw, versions);
  }
  return out;
}

}  // namespace

Result<std::vector<DynamicSymbol>> read_dynamic_symbols(const ElfHandle& h,
                                                        const std::vector<VersionDefinition>& defs,
                                                        const std::vector<VersionNeed>& needs) {
  auto tables = symbol_tables(h);
  if (!tables.ok()) return tables.to_error();
  const SymbolTables& t = tables.value();
  VersionIndex versions = index_versions(defs, needs);
  std::vector<DynamicSymbol> symbols;
  symbols.reserve(t.count > 0 ? t.count - 1 : 0);
  for (std::size_t i = 1; i < t.count; ++i) {
    auto sym = read_symbol(h, t, i, versions);
    if (!sym.ok()) return sym.to_error();
    symbols.push_back(std::move(sym.value()));
  }
  return symbols;
}

}  // namespace cudashim::symbols::detail
