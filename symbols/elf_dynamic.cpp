// The dynamic section: DT_SONAME, DT_NEEDED, DT_RPATH, DT_RUNPATH.
#include <climits>

#include "symbols/elf_readers.h"

namespace cudashim::symbols::detail {
namespace {

// Where the strings of the dynamic entries live: a string-table section
// (by index) or, for files without section headers, a raw chunk of bytes.
struct StringSource {
  std::size_t strtab_index = 0;
  const char* bytes = nullptr;
  std::size_t size = 0;
};

Result<std::string> dyn_string(const ElfHandle& h, const StringSource& src, std::uint64_t offset,
                               const char* tag) {
  if (src.bytes == nullptr) return string_at(h, src.strtab_index, offset, tag);
  auto s = string_in(src.bytes, src.size, offset);
  if (!s) return h.error(std::string("bad string offset ") + std::to_string(offset) + " for " + tag);
  return *s;
}

// Number of GElf_Dyn entries in `data`; an error when it cannot be indexed by int.
Result<std::size_t> dyn_count(const ElfHandle& h, const Elf_Data* data) {
  std::size_t entsize = gelf_fsize(h.elf(), ELF_T_DYN, 1, EV_CURRENT);
  if (entsize == 0) return h.error("cannot size dynamic entries: " + libelf_message());
  std::size_t count = data->d_size / entsize;
  if (count > static_cast<std::size_t>(INT_MAX)) return h.error("dynamic section too large");
  return count;
}

// Walks the entries of `data` up to DT_NULL, resolving string tags through `src`.
Result<DynamicInfo> walk_dynamic(const ElfHandle& h, Elf_Data* data, const StringSource& src) {
  auto count = dyn_count(h, data);
  if (!count.ok()) return count.to_error();
  DynamicInfo info;
  for (std::size_t i = 0; i < count.value(); ++i) {
    GElf_Dyn dyn{};
    if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr)
      return h.error("cannot read dynamic entry " + std::to_string(i) + ": " + libelf_message());
    if (dyn.d_tag == DT_NULL) break;
    std::string* field = nullptr;
    const char* tag = nullptr;
    switch (dyn.d_tag) {
      case DT_NEEDED: field = &info.needed.emplace_back(); tag = "DT_NEEDED"; break;
      case DT_SONAME: field = &info.soname; tag = "DT_SONAME"; break;
      case DT_RPATH: field = &info.rpath; tag = "DT_RPATH"; break;
      case DT_RUNPATH: field = &info.runpath; tag = "DT_RUNPATH"; break;
      default: continue;
    }
    auto s = dyn_string(h, src, dyn.d_un.d_val, tag);
    if (!s.ok()) return s.to_error();
    *field = std::move(s.value());
  }
  return info;
}

// DT_STRTAB/DT_STRSZ of a raw dynamic segment, as a chunk of file bytes.
Result<StringSource> segment_strings(const ElfHandle& h, Elf_Data* data) {
  auto count = dyn_count(h, data);
  if (!count.ok()) return count.to_error();
  std::uint64_t addr = 0, size = 0;
  for (std::size_t i = 0; i < count.value(); ++i) {
    GElf_Dyn dyn{};
    if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr)
      return h.error("cannot read dynamic entry " + std::to_string(i) + ": " + libelf_message());
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag == DT_STRTAB) addr = dyn.d_un.d_ptr;
    if (dyn.d_tag == DT_STRSZ) size = dyn.d_un.d_val;
  }
  if (addr == 0 || size == 0) return StringSource{};
  auto offset = vaddr_to_offset(h, addr);
  if (!offset.ok()) return offset.to_error();
  if (!offset.value() || *offset.value() > h.file_size() || size > h.file_size() - *offset.value())
    return h.error("DT_STRTAB/DT_STRSZ do not lie in the file");
  Elf_Data* strs = elf_getdata_rawchunk(h.elf(), static_cast<int64_t>(*offset.value()), size, ELF_T_BYTE);
  if (strs == nullptr || strs->d_buf == nullptr) return h.error("cannot read DT_STRTAB: " + libelf_message());
  return StringSource{0, static_cast<const char*>(strs->d_buf), strs->d_size};
}

// The dynamic entries through PT_DYNAMIC, for files without section headers.
Result<DynamicInfo> read_dynamic_segment(const ElfHandle& h) {
  auto found = find_segment(h, PT_DYNAMIC);
  if (!found.ok()) return found.to_error();
  if (!found.value() || found.value()->p_filesz == 0) return DynamicInfo{};
  const GElf_Phdr& p = *found.value();
  if (p.p_offset > h.file_size() || p.p_filesz > h.file_size() - p.p_offset)
    return h.error("PT_DYNAMIC extends past the end of the file");
  Elf_Data* data = elf_getdata_rawchunk(h.elf(), static_cast<int64_t>(p.p_offset), p.p_filesz, ELF_T_DYN);
  if (data == nullptr) return h.error("cannot read PT_DYNAMIC: " + libelf_message());
  auto src = segment_strings(h, data);
  if (!src.ok()) return src.to_error();
  if (src.value().bytes == nullptr) return DynamicInfo{};
  return walk_dynamic(h, data, src.value());
}

}  // namespace

Result<DynamicInfo> read_dynamic(const ElfHandle& h) {
  if (h.shnum() == 0) return read_dynamic_segment(h);
  auto found = find_section_by_type(h, SHT_DYNAMIC);
  if (!found.ok()) return found.to_error();
  if (!found.value()) return DynamicInfo{};
  auto data = section_data(h, found.value()->scn, found.value()->shdr, "SHT_DYNAMIC");
  if (!data.ok()) return data.to_error();
  return walk_dynamic(h, data.value(), StringSource{found.value()->shdr.sh_link, nullptr, 0});
}

}  // namespace cudashim::symbols::detail
