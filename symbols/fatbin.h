// The CUDA fat binary in an ELF file's .nv_fatbin section, and what it offers a GPU.
// Layout, checked against cuobjdump 13.2 --list-elf --list-ptx on nvcc 13.0 output, the
// CUDA 12.3 cuSPARSE wheel and CUDA 13.0 cuBLASLt/cuSPARSE (all little-endian):
//   container: u32 magic 0xBA55ED50, u16 version (1), u16 header size (16),
//              u64 size of the entries that follow; containers follow one another,
//              each starting 8-byte aligned.
//   entry:     u16 kind (1 PTX, 2 cubin, 8 LTO-IR), u16 version (0x0101), u32 header size
//              (64; 80/96/112 with an extension), u64 payload size (8-byte padded),
//              u32 compressed size, u32 unknown, u16 minor + u16 major (PTX ISA / cubin
//              format version), u32 SM arch (e.g. 90), u32 name offset, u32 name length,
//              u64 flags, u64 unknown, u64 uncompressed size; the payload follows the header.
//   flags:     0x2000 compressed (CUDA 12), 0x8000 compressed (CUDA 13),
//              0x100000 arch-specific code (sm_90a), 0x1 64-bit, 0x10 Linux host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "symbols/elf_file.h"
#include "symbols/result.h"

namespace cudashim::symbols {

enum class FatbinKind : std::uint16_t { ptx = 1, cubin = 2, lto_ir = 8 };

inline constexpr std::uint32_t kFatbinMagic = 0xBA55ED50u;
inline constexpr std::uint64_t kFatbinFlagCompressedLz4 = 0x2000, kFatbinFlagCompressed = 0x8000,
                               kFatbinFlagArchSpecific = 0x100000;

// Whether an entry holds kernels: known for uncompressed cubins (".text.<kernel>" sections)
// and PTX (".entry"); unknown for compressed ones.
enum class KernelPresence { unknown, none, some };

// One entry of a container: a cubin, PTX or LTO-IR for one architecture.
struct FatbinEntry {
  std::uint16_t kind = 0;           // FatbinKind value, or an unknown one as found
  std::uint32_t sm_arch = 0;        // e.g. 90; for PTX the virtual arch (compute_90)
  bool arch_specific = false;       // flag 0x100000: sm_90a / compute_90a, runs on that exact SM only
  std::uint16_t version_major = 0;  // PTX ISA (e.g. 9.0) or cubin format (1.8)
  std::uint16_t version_minor = 0;
  std::uint64_t flags = 0;
  bool compressed = false;          // flags 0x2000 or 0x8000
  std::uint32_t header_size = 0;
  std::uint64_t payload_size = 0;   // as stored (padded)
  std::uint32_t compressed_size = 0;  // exact stored bytes of a compressed payload, else 0
  std::uint64_t uncompressed_size = 0;  // the payload's real size: the header's when compressed
  std::uint64_t offset = 0;         // of the entry header, from the start of the section
  std::uint64_t payload_offset = 0;
  int container = 0;                // index of the container holding it
  bool embedded = false;            // found outside .nv_fatbin (see scan_embedded_fatbins)
  KernelPresence kernels = KernelPresence::unknown;
  // "sm_90", "sm_90a", "compute_90" (PTX), "lto_90" (LTO-IR), "kind7_90" (unknown kind).
  std::string arch_name() const;
};

struct Fatbin {
  int containers = 0;                 // all of them, embedded ones included
  int embedded_containers = 0;
  std::vector<FatbinEntry> entries;   // in section order
  std::uint64_t skipped_bytes = 0;    // bytes between containers that held no container
  std::vector<std::string> problems;  // truncations and inconsistencies met (parsing goes on)
};

// Parses a .nv_fatbin section image. Never fails and never reads outside [data, data+size):
// garbage gives fewer entries and a problem line. Loops are bounded by `size` (each step
// advances) and by `max_entries`.
Fatbin parse_fatbin(const std::uint8_t* data, std::size_t size, std::size_t max_entries = 1u << 20);

// Adds the containers found inside other bytes (a data section): some libraries (cuFFT 12:
// ~24000 of them in .ldata, outside .nv_fatbin, unseen by cuobjdump) embed fatbins they load
// themselves. Only magics 8-aligned in the file (`file_offset` is where `data` starts there)
// with version 1, a 16-byte header and a size that fits, whose entries parse cleanly, count.
// Never reads outside [data, data+size).
void scan_embedded_fatbins(const std::uint8_t* data, std::size_t size, Fatbin& out, std::uint64_t file_offset = 0,
                           std::size_t max_entries = 1u << 20);

// The fatbins of the ELF file at `path` (whose facts are `facts`), read in place through mmap:
// the .nv_fatbin section, then containers embedded in other allocated, non-code sections.
// A file with neither gives an empty Fatbin; errors name the file.
Result<Fatbin> read_fatbin(const std::string& path, const ElfFacts& facts);

// How a device of compute capability sm (e.g. 90 for 9.0) gets machine code.
enum class CoverageKind { sass, ptx_jit, none };
const char* coverage_name(CoverageKind c);  // "sass", "ptx_jit", "none"

struct Coverage {
  int sm = 0;
  CoverageKind kind = CoverageKind::none;  // over the whole file: best container wins
  int containers = 0;                      // containers that may hold kernels (see below)
  int containers_empty = 0;                // containers whose code is known to hold no kernel
  int containers_sass = 0;                 // containers with a cubin that runs on `sm`
  int containers_ptx_only = 0;             // no such cubin, but PTX the driver can JIT for `sm`
  int containers_none = 0;                 // neither
  std::uint64_t ptx_jit_bytes = 0;         // uncompressed PTX the ptx-only containers JIT
  std::vector<std::string> sass_archs;     // distinct cubin arch names in the file, in arch_less order
  std::vector<std::string> ptx_archs;      // distinct PTX arch names in the file, in arch_less order
  std::string best_sass;                   // the cubin arch chosen for `sm`, "" if none
  std::string best_ptx;                    // the PTX arch JIT-compiled, "" if none or unused
};

// Does a cubin built for `entry` run on compute capability `sm`? Same major, minor <= the
// device's (sm_80 runs on 8.6, not on 9.0); an arch-specific (sm_90a) cubin only on its own SM.
bool cubin_runs_on(const FatbinEntry& entry, int sm);

// Can the driver JIT PTX `entry` for `sm`? Virtual arch <= sm (compute_90a: on 9.0 only).
bool ptx_jits_for(const FatbinEntry& entry, int sm);

// Architecture names in numeric order: "sm_50" < "sm_90" < "sm_90a" < "sm_100" < "sm_120"; the
// prefix ("compute_", "lto_", "sm_") first, as text, then the number, then the suffix.
bool arch_less(const std::string& a, const std::string& b);

// Which containers coverage_for looks at: those the CUDA runtime registers (.nv_fatbin),
// those a library embeds and loads itself, or both.
enum class FatbinSource { all, registered, embedded };

// Coverage of compute capability `sm` (major*10+minor, e.g. 90, 86, 120) by `fatbin`.
// Entries known to hold no kernel are left out: a container with only those is "empty".
// The SASS and PTX architecture lists are in arch_less order.
Coverage coverage_for(const Fatbin& fatbin, int sm, FatbinSource source = FatbinSource::all);

// Device-code bytes of one architecture name ("sm_90", "compute_90", "lto_90", ...) in a fatbin,
// and how many of them a GPU of compute capability `sm` would use.
struct ArchBytes {
  std::string arch;                        // FatbinEntry::arch_name()
  std::uint16_t kind = 0;                  // FatbinKind value
  std::uint64_t entries = 0;
  std::uint64_t stored_bytes = 0;          // as in the file: compressed size, else the padded payload
  std::uint64_t uncompressed_bytes = 0;    // the header's uncompressed size (PTX: with its final NUL)
  std::uint64_t used_entries = 0;          // entries the driver would load for `sm` (see fatbin_bytes)
  std::uint64_t used_stored_bytes = 0;
  std::uint64_t used_uncompressed_bytes = 0;
};

struct FatbinBytes {
  int sm = 0;
  std::vector<ArchBytes> archs;            // in arch_less order
  std::uint64_t stored_bytes = 0, uncompressed_bytes = 0;            // every entry
  std::uint64_t sass_stored_bytes = 0, ptx_stored_bytes = 0;         // cubins, PTX (LTO-IR in neither)
  std::uint64_t used_stored_bytes = 0, used_uncompressed_bytes = 0;  // entries used on `sm`
};

// Per-architecture byte accounting of `fatbin` for a GPU of compute capability `sm`. In each
// container the driver uses one entry: the newest cubin that runs on `sm`, else the newest PTX
// it can JIT for `sm`; those entries count as used, every other byte serves other GPUs.
// Uncompressed sizes come from the entry headers (cuobjdump --extract-elf writes cubins of
// exactly that size; --extract-ptx writes PTX one byte shorter, without the final NUL).
FatbinBytes fatbin_bytes(const Fatbin& fatbin, int sm, FatbinSource source = FatbinSource::all);

}  // namespace cudashim::symbols
