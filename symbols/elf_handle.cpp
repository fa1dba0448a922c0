#include "symbols/elf_handle.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "symbols/bounded_read.h"

namespace cudashim::symbols::detail {
namespace {

std::string errno_text(int err) { return std::generic_category().message(err); }

// Does a table of `count` entries of `entsize` bytes at `offset` fit in `file_size`?
bool table_fits(std::uint64_t offset, std::uint64_t count, std::uint64_t entsize,
                std::uint64_t file_size) {
  if (count == 0) return true;
  if (entsize == 0 || offset > file_size) return false;
  return count <= (file_size - offset) / entsize;
}

// Does [offset, offset+size) lie inside the file?
bool range_fits(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// Explains why libelf did not see an ELF file, from the first bytes of the file.
std::string why_not_elf(int fd, std::uint64_t file_size, Elf_Kind kind) {
  if (kind == ELF_K_AR) return "an ar archive, not an ELF file";
  std::array<unsigned char, EI_NIDENT> ident{};
  ssize_t got = pread(fd, ident.data(), ident.size(), 0);
  if (got < SELFMAG || std::memcmp(ident.data(), ELFMAG, SELFMAG) != 0)
    return "not an ELF file (bad magic)";
  if (file_size < EI_NIDENT) return "truncated ELF identification (" + std::to_string(file_size) + " bytes)";
  std::uint64_t ehdr_size = ident[EI_CLASS] == ELFCLASS32   ? sizeof(Elf32_Ehdr)
                            : ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr)
                                                            : 0;
  if (ehdr_size != 0 && file_size < ehdr_size) return "truncated ELF header (" + std::to_string(file_size) + " bytes)";
  return "unsupported ELF identification (class " + std::to_string(ident[EI_CLASS]) + ", data " +
         std::to_string(ident[EI_DATA]) + ", version " + std::to_string(ident[EI_VERSION]) + ")";
}

// elf_version() once per process (thread-safe local static, no global constructor).
bool libelf_ready() {
  static const bool ready = elf_version(EV_CURRENT) != EV_NONE;
  return ready;
}

}  // namespace

std::string libelf_message() {
  const char* msg = elf_errmsg(-1);
  return msg != nullptr ? std::string(msg) : std::string("unknown libelf error");
}

ElfHandle::ElfHandle(ElfHandle&& other) noexcept
    : path_(std::move(other.path_)),
      fd_(std::exchange(other.fd_, -1)),
      elf_(std::exchange(other.elf_, nullptr)),
      file_size_(other.file_size_),
      ehdr_(other.ehdr_),
      phnum_(other.phnum_),
      shnum_(other.shnum_) {}

ElfHandle& ElfHandle::operator=(ElfHandle&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
    file_size_ = other.file_size_;
    ehdr_ = other.ehdr_;
    phnum_ = other.phnum_;
    shnum_ = other.shnum_;
  }
  return *this;
}

ElfHandle::~ElfHandle() { release(); }

void ElfHandle::release() noexcept {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

Result<ElfHandle> ElfHandle::open(const std::string& path) {
  ElfHandle h;
  h.path_ = path;
  // Never a FIFO or a device (symbols/bounded_read.h): opening one could block for good.
  const OpenedFile f = open_regular(path.c_str());
  if (f.fd < 0) return h.error(f.err != 0 ? "cannot open: " + errno_text(f.err) : open_problem(f));
  h.fd_ = f.fd;
  if (f.size == 0) return h.error("empty file");
  h.file_size_ = f.size;

  if (!libelf_ready()) return h.error("libelf is unusable (elf_version failed)");
  // ELF_C_READ (not MMAP): libelf preads what it needs, so a file that shrinks
  // under us gives read errors rather than SIGBUS.
  h.elf_ = elf_begin(h.fd_, ELF_C_READ, nullptr);
  if (h.elf_ == nullptr) {
    std::string why = why_not_elf(h.fd_, h.file_size_, ELF_K_NONE);
    if (why.rfind("unsupported", 0) != 0) return h.error(why);
    return h.error("libelf cannot read it: " + libelf_message());
  }
  Elf_Kind kind = elf_kind(h.elf_);
  if (kind != ELF_K_ELF) return h.error(why_not_elf(h.fd_, h.file_size_, kind));

  std::size_t ehdr_size = gelf_fsize(h.elf_, ELF_T_EHDR, 1, EV_CURRENT);
  if (ehdr_size == 0 || h.file_size_ < ehdr_size)
    return h.error("truncated ELF header (" + std::to_string(h.file_size_) + " bytes)");
  if (gelf_getehdr(h.elf_, &h.ehdr_) == nullptr) return h.error("bad ELF header: " + libelf_message());

  auto tables = h.check_tables();
  if (!tables.ok()) return tables.to_error();
  return h;
}

// e_phnum, or (PN_XNUM) the count libelf reads from section 0.
Result<std::size_t> ElfHandle::declared_phnum() const {
  if (ehdr_.e_phnum != PN_XNUM) return std::size_t{ehdr_.e_phnum};
  std::size_t libelf_count = 0;
  if (elf_getphdrnum(elf_, &libelf_count) != 0) return error("bad program header count: " + libelf_message());
  return libelf_count;
}

// e_shnum, or (extended numbering: e_shnum 0, e_shoff set) section 0's sh_size
// through libelf; 0 when e_shoff is 0.
Result<std::size_t> ElfHandle::declared_shnum() const {
  if (ehdr_.e_shoff == 0) return std::size_t{0};
  if (ehdr_.e_shnum != 0) return std::size_t{ehdr_.e_shnum};
  std::size_t shent = gelf_fsize(elf_, ELF_T_SHDR, 1, EV_CURRENT);
  if (!table_fits(ehdr_.e_shoff, 1, shent, file_size_))
    return error("truncated section header table (section 0 does not fit)");
  std::size_t libelf_count = 0;
  if (elf_getshdrnum(elf_, &libelf_count) != 0) return error("bad section header count: " + libelf_message());
  return libelf_count;
}

// Checks that the header tables the ELF header declares lie in the file and
// that libelf sees the same number of entries (it reports 0 for tables that do
// not fit, which would otherwise read as "no sections").
Result<bool> ElfHandle::check_tables() {
  auto phnum = declared_phnum();
  if (!phnum.ok()) return phnum.to_error();
  std::size_t phent = gelf_fsize(elf_, ELF_T_PHDR, 1, EV_CURRENT);
  if (phnum.value() > 0 && ehdr_.e_phentsize != phent)
    return error("unexpected program header entry size " + std::to_string(ehdr_.e_phentsize));
  if (!table_fits(ehdr_.e_phoff, phnum.value(), phent, file_size_))
    return error("truncated program header table (" + std::to_string(phnum.value()) + " entries at offset " +
                 std::to_string(ehdr_.e_phoff) + ", file is " + std::to_string(file_size_) + " bytes)");
  phnum_ = 0;
  if (phnum.value() > 0 && (elf_getphdrnum(elf_, &phnum_) != 0 || phnum_ != phnum.value()))
    return error("libelf cannot read the program header table");

  if (ehdr_.e_shoff != 0 && !range_fits(ehdr_.e_shoff, 1, file_size_))
    return error("truncated section header table (offset " + std::to_string(ehdr_.e_shoff) +
                 " is past the end of the " + std::to_string(file_size_) + "-byte file)");
  auto shnum = declared_shnum();
  if (!shnum.ok()) return shnum.to_error();
  std::size_t shent = gelf_fsize(elf_, ELF_T_SHDR, 1, EV_CURRENT);
  if (shnum.value() > 0 && ehdr_.e_shentsize != shent)
    return error("unexpected section header entry size " + std::to_string(ehdr_.e_shentsize));
  if (!table_fits(ehdr_.e_shoff, shnum.value(), shent, file_size_))
    return error("truncated section header table (" + std::to_string(shnum.value()) + " entries at offset " +
                 std::to_string(ehdr_.e_shoff) + ", file is " + std::to_string(file_size_) + " bytes)");
  shnum_ = 0;
  if (shnum.value() > 0 && (elf_getshdrnum(elf_, &shnum_) != 0 || shnum_ != shnum.value()))
    return error("libelf cannot read the section header table");
  return true;
}

Result<std::string> string_at(const ElfHandle& h, std::size_t strtab, std::uint64_t offset,
                              const std::string& what) {
  const char* s = elf_strptr(h.elf(), strtab, static_cast<std::size_t>(offset));
  if (s == nullptr)
    return h.error("bad string offset " + std::to_string(offset) + " for " + what + ": " + libelf_message());
  return std::string(s);
}

Result<std::string> section_name(const ElfHandle& h, Elf_Scn* scn, const GElf_Shdr& shdr) {
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(h.elf(), &shstrndx) != 0)
    return h.error("bad section name string table index: " + libelf_message());
  return string_at(h, shstrndx, shdr.sh_name, "the name of section " + std::to_string(elf_ndxscn(scn)));
}

Result<Elf_Data*> section_data(const ElfHandle& h, Elf_Scn* scn, const GElf_Shdr& shdr,
                               const std::string& what) {
  if (shdr.sh_type == SHT_NOBITS) return h.error("section " + what + " has no bytes in the file (SHT_NOBITS)");
  if (!range_fits(shdr.sh_offset, shdr.sh_size, h.file_size()))
    return h.error("section " + what + " extends past the end of the file (offset " +
                   std::to_string(shdr.sh_offset) + ", size " + std::to_string(shdr.sh_size) + ", file is " +
                   std::to_string(h.file_size()) + " bytes)");
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (data == nullptr) return h.error("cannot read section " + what + ": " + libelf_message());
  if (data->d_size > 0 && data->d_buf == nullptr) return h.error("section " + what + " has no data");
  return data;
}

}  // namespace cudashim::symbols::detail
