// Section headers: listing them and finding one by type or by name.
#include "symbols/elf_readers.h"

namespace cudashim::symbols::detail {
namespace {

// Header of section `index`; an error when libelf cannot give it.
Result<FoundSection> section_at(const ElfHandle& h, std::size_t index) {
  FoundSection found;
  found.scn = elf_getscn(h.elf(), index);
  if (found.scn == nullptr || gelf_getshdr(found.scn, &found.shdr) == nullptr)
    return h.error("cannot read section header " + std::to_string(index) + ": " + libelf_message());
  return found;
}

}  // namespace

Result<std::optional<FoundSection>> find_section_by_type(const ElfHandle& h, GElf_Word sh_type) {
  for (std::size_t i = 1; i < h.shnum(); ++i) {
    auto found = section_at(h, i);
    if (!found.ok()) return found.to_error();
    if (found.value().shdr.sh_type == sh_type) return std::optional<FoundSection>(found.value());
  }
  return std::optional<FoundSection>();
}

Result<std::optional<FoundSection>> find_section_by_name(const ElfHandle& h, const std::string& name) {
  for (std::size_t i = 1; i < h.shnum(); ++i) {
    auto found = section_at(h, i);
    if (!found.ok()) return found.to_error();
    auto found_name = section_name(h, found.value().scn, found.value().shdr);
    if (!found_name.ok()) return found_name.to_error();
    if (found_name.value() == name) return std::optional<FoundSection>(found.value());
  }
  return std::optional<FoundSection>();
}

Result<std::vector<Section>> read_sections(const ElfHandle& h) {
  std::vector<Section> sections;
  sections.reserve(h.shnum());
  for (std::size_t i = 0; i < h.shnum(); ++i) {
    auto found = section_at(h, i);
    if (!found.ok()) return found.to_error();
    const GElf_Shdr& shdr = found.value().shdr;
    Section s;
    if (i != 0) {
      auto name = section_name(h, found.value().scn, shdr);
      if (!name.ok()) return name.to_error();
      s.name = std::move(name.value());
    }
    s.type = shdr.sh_type;
    s.offset = shdr.sh_offset;
    s.size = shdr.sh_size;
    s.flags = shdr.sh_flags;
    sections.push_back(std::move(s));
  }
  return sections;
}

}  // namespace cudashim::symbols::detail
