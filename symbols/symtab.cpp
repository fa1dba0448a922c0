// symtab.cpp: reading .symtab with libelf.
#include "symbols/symtab.h"

#include <algorithm>

#include "symbols/elf_handle.h"
#include "symbols/elf_readers.h"

namespace cudashim::symbols {

Result<std::vector<FunctionSymbol>> read_function_symbols(const std::string& path) {
  auto opened = detail::ElfHandle::open(path);
  if (!opened.ok()) return opened.to_error();
  const detail::ElfHandle& h = opened.value();
  auto sec = detail::find_section_by_type(h, SHT_SYMTAB);
  if (!sec.ok()) return sec.to_error();
  if (!sec.value()) sec = detail::find_section_by_type(h, SHT_DYNSYM);
  if (!sec.ok()) return sec.to_error();
  std::vector<FunctionSymbol> out;
  if (!sec.value()) return out;
  auto data = detail::section_data(h, sec.value()->scn, sec.value()->shdr, "symbol table");
  if (!data.ok()) return data.to_error();
  const std::size_t entsize = gelf_fsize(h.elf(), ELF_T_SYM, 1, EV_CURRENT);
  if (entsize == 0) return h.error("cannot size symbols: " + detail::libelf_message());
  const std::size_t count = data.value()->d_size / entsize;
  for (std::size_t i = 0; i < count && i < (1u << 24); ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data.value(), static_cast<int>(i), &sym) == nullptr) return h.error("bad symbol entry");
    if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF || sym.st_value == 0) continue;
    auto name = detail::string_at(h, sec.value()->shdr.sh_link, sym.st_name, "symbol name");
    if (!name.ok()) continue;
    out.push_back({sym.st_value, sym.st_size, name.value()});
  }
  std::sort(out.begin(), out.end(), [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.value < b.value; });
  return out;
}

const FunctionSymbol* function_at(const std::vector<FunctionSymbol>& sorted, std::uint64_t address) {
  auto it = std::upper_bound(sorted.begin(), sorted.end(), address,
                             [](std::uint64_t a, const FunctionSymbol& s) { return a < s.value; });
  if (it == sorted.begin()) return nullptr;
  --it;
  if (it->size != 0 && address >= it->value + it->size) return nullptr;
  return &*it;
}

}  // namespace cudashim::symbols
