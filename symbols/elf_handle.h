// Internal to the symbols layer: an open, validated libelf handle on one file.
// Only symbols/*.cpp include this header (it pulls in libelf's <gelf.h>).
#pragma once

#include <gelf.h>

#include <cstdint>
#include <string>

#include "symbols/result.h"

namespace cudashim::symbols::detail {

// Owns the file descriptor and the Elf*; movable, not copyable.
class ElfHandle {
 public:
  // Opens `path` read-only and checks that it is a regular ELF file whose
  // ELF header, program header table and section header table lie in the file.
  static Result<ElfHandle> open(const std::string& path);

  ElfHandle(ElfHandle&& other) noexcept;
  ElfHandle& operator=(ElfHandle&& other) noexcept;
  ElfHandle(const ElfHandle&) = delete;
  ElfHandle& operator=(const ElfHandle&) = delete;
  ~ElfHandle();

  Elf* elf() const { return elf_; }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::uint64_t file_size() const { return file_size_; }
  const GElf_Ehdr& ehdr() const { return ehdr_; }
  std::size_t phnum() const { return phnum_; }
  std::size_t shnum() const { return shnum_; }

  // "<path>: <what>".
  Error error(const std::string& what) const { return make_error(path_, what); }

 private:
  ElfHandle() = default;
  void release() noexcept;
  Result<std::size_t> declared_phnum() const;
  Result<std::size_t> declared_shnum() const;
  Result<bool> check_tables();

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  std::uint64_t file_size_ = 0;
  GElf_Ehdr ehdr_{};
  std::size_t phnum_ = 0;
  std::size_t shnum_ = 0;
};

// The last libelf error as text ("unknown libelf error" when none is set).
std::string libelf_message();

// The name of a section through the section-header string table; an error when
// the table or the offset is bad.
Result<std::string> section_name(const ElfHandle& h, Elf_Scn* scn, const GElf_Shdr& shdr);

// The (converted) data of a section that holds bytes in the file, after checking
// that the bytes lie inside the file. `what` names the section in messages.
Result<Elf_Data*> section_data(const ElfHandle& h, Elf_Scn* scn, const GElf_Shdr& shdr,
                               const std::string& what);

// Reads a NUL-terminated string at `offset` of string table section `strtab`.
Result<std::string> string_at(const ElfHandle& h, std::size_t strtab, std::uint64_t offset,
                              const std::string& what);

}  // namespace cudashim::symbols::detail
