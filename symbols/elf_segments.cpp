// Program headers: PT_INTERP, and mapping virtual addresses to file offsets.
#include <cstring>

#include "symbols/elf_readers.h"
#include "symbols/link_address.h"

namespace cudashim::symbols::detail {
namespace {

// Longest PT_INTERP we accept (PATH_MAX).
constexpr std::uint64_t kMaxInterp = 4096;

Result<GElf_Phdr> segment_at(const ElfHandle& h, std::size_t index) {
  GElf_Phdr phdr{};
  if (gelf_getphdr(h.elf(), static_cast<int>(index), &phdr) == nullptr)
    return h.error("cannot read program header " + std::to_string(index) + ": " + libelf_message());
  return phdr;
}

}  // namespace

std::optional<std::string> string_in(const char* bytes, std::size_t size, std::uint64_t offset) {
  if (bytes == nullptr || offset >= size) return std::nullopt;
  const char* start = bytes + offset;
  const void* nul = std::memchr(start, '\0', size - offset);
  if (nul == nullptr) return std::nullopt;
  return std::string(start, static_cast<const char*>(nul));
}

Result<std::optional<GElf_Phdr>> find_segment(const ElfHandle& h, GElf_Word p_type) {
  for (std::size_t i = 0; i < h.phnum(); ++i) {
    auto phdr = segment_at(h, i);
    if (!phdr.ok()) return phdr.to_error();
    if (phdr.value().p_type == p_type) return std::optional<GElf_Phdr>(phdr.value());
  }
  return std::optional<GElf_Phdr>();
}

Result<std::optional<std::uint64_t>> vaddr_to_offset(const ElfHandle& h, std::uint64_t addr) {
  for (std::size_t i = 0; i < h.phnum(); ++i) {
    auto phdr = segment_at(h, i);
    if (!phdr.ok()) return phdr.to_error();
    const GElf_Phdr& p = phdr.value();
    if (p.p_type == PT_LOAD && addr >= p.p_vaddr && addr - p.p_vaddr < p.p_filesz)
      return std::optional<std::uint64_t>(p.p_offset + (addr - p.p_vaddr));
  }
  return std::optional<std::uint64_t>();
}

Result<std::string> read_interp(const ElfHandle& h) {
  auto found = find_segment(h, PT_INTERP);
  if (!found.ok()) return found.to_error();
  if (!found.value()) return std::string();
  const GElf_Phdr& p = *found.value();
  if (p.p_filesz == 0) return h.error("empty PT_INTERP");
  if (p.p_filesz > kMaxInterp) return h.error("PT_INTERP is " + std::to_string(p.p_filesz) + " bytes, too long");
  if (p.p_offset > h.file_size() || p.p_filesz > h.file_size() - p.p_offset)
    return h.error("PT_INTERP extends past the end of the file");
  Elf_Data* data = elf_getdata_rawchunk(h.elf(), static_cast<int64_t>(p.p_offset), p.p_filesz, ELF_T_BYTE);
  if (data == nullptr || data->d_buf == nullptr) return h.error("cannot read PT_INTERP: " + libelf_message());
  const char* bytes = static_cast<const char*>(data->d_buf);
  auto s = string_in(bytes, data->d_size, 0);
  return s ? *s : std::string(bytes, data->d_size);
}

}  // namespace cudashim::symbols::detail

namespace cudashim::symbols {

std::optional<std::uint64_t> link_address_of_offset(const std::string& path, std::uint64_t file_offset) {
  auto h = detail::ElfHandle::open(path);
  if (!h.ok()) return std::nullopt;
  for (std::size_t i = 0; i < h.value().phnum(); ++i) {
    const auto phdr = detail::segment_at(h.value(), i);
    if (!phdr.ok()) return std::nullopt;
    const GElf_Phdr& p = phdr.value();
    if (p.p_type == PT_LOAD && file_offset >= p.p_offset && file_offset - p.p_offset < p.p_filesz)
      return p.p_vaddr + (file_offset - p.p_offset);
  }
  return std::nullopt;
}

}  // namespace cudashim::symbols
