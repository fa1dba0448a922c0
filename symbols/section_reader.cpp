#include "symbols/section_reader.h"

#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <exception>
#include <new>

#include "symbols/elf_readers.h"

namespace cudashim::symbols {
namespace {

// Copies the raw bytes of a found section, after the size and bounds checks.
Result<std::vector<std::uint8_t>> copy_section(const detail::ElfHandle& h, const detail::FoundSection& found,
                                               const std::string& name, std::size_t max_bytes) {
  const GElf_Shdr& shdr = found.shdr;
  if (shdr.sh_type == SHT_NOBITS) return h.error("section " + name + " has no bytes in the file (SHT_NOBITS)");
  if (shdr.sh_size > max_bytes)
    return h.error("section " + name + " is " + std::to_string(shdr.sh_size) + " bytes, over the limit of " +
                   std::to_string(max_bytes));
  if (shdr.sh_offset > h.file_size() || shdr.sh_size > h.file_size() - shdr.sh_offset)
    return h.error("section " + name + " extends past the end of the file");
  std::vector<std::uint8_t> bytes(shdr.sh_size);
  // One copy, straight from the file: libelf located the bytes, pread reads them.
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t got = pread(h.fd(), bytes.data() + done, bytes.size() - done,
                        static_cast<off_t>(shdr.sh_offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return h.error("cannot read section " + name + ": " +
                     (got < 0 ? std::generic_category().message(errno) : std::string("file shrank")));
    done += static_cast<std::size_t>(got);
  }
  return bytes;
}

}  // namespace

Result<std::vector<std::uint8_t>> read_section(const std::string& path, std::string_view name,
                                               std::size_t max_bytes) {
  try {
    auto handle = detail::ElfHandle::open(path);
    if (!handle.ok()) return handle.to_error();
    const detail::ElfHandle& h = handle.value();
    std::string wanted(name);
    auto found = detail::find_section_by_name(h, wanted);
    if (!found.ok()) return found.to_error();
    if (!found.value()) return h.error("no section named " + wanted);
    return copy_section(h, *found.value(), wanted, max_bytes);
  } catch (const std::bad_alloc&) {
    return make_error(path, "out of memory while reading section " + std::string(name));
  } catch (const std::exception& e) {
    return make_error(path, std::string("unexpected failure: ") + e.what());
  }
}

}  // namespace cudashim::symbols
