// policy/rules/fatbin.cpp: see fatbin.h.
#include "policy/rules/fatbin.h"

#include <algorithm>

#include "symbols/path_names.h"

namespace cudashim::policy {
using symbols::ArchBytes;
using symbols::Coverage;
using symbols::CoverageKind;
using symbols::FatbinBytes;
namespace {

constexpr std::size_t kMaxEvidence = 12;  // lines of one list in one finding

Finding make(FindingId id, std::string subject, std::string message) {
  return Finding{id, std::move(subject), std::move(message), {}};
}

}  // namespace

void add_fatbin_coverage_findings(const std::string& path, const std::optional<Coverage>& registered,
                                  const std::optional<Coverage>& embedded, std::vector<Finding>& out) {
  if (!registered) return;
  const Coverage& c = *registered;
  if (c.containers == 0) return;
  auto archs = [&] {
    std::string s = "SASS: ";
    for (const auto& a : c.sass_archs) s += a + " ";
    s += "| PTX: ";
    for (const auto& a : c.ptx_archs) s += a + " ";
    return s;
  };
  const std::string sm = "sm_" + std::to_string(c.sm);
  // A library that embeds fatbins of its own (cuFFT) and has code for the GPU there does not
  // depend on its registered one.
  const bool own_code = embedded && embedded->kind != CoverageKind::none;
  if (c.kind == CoverageKind::none && !own_code) {
    Finding f = make(FindingId::fatbin_no_kernel_image, path,
                     symbols::base_name(path) + ": no kernel image for " + sm);
    f.evidence.push_back(archs());
    f.evidence.push_back(std::to_string(c.containers) + " fatbin containers with kernels, none with a cubin or PTX usable on " + sm);
    out.push_back(std::move(f));
  } else if (c.containers_ptx_only > 0) {
    Finding f = make(FindingId::fatbin_no_sass, path,
                     symbols::base_name(path) + ": " + std::to_string(c.containers_ptx_only) + " of " +
                         std::to_string(c.containers) + " fatbin containers have no SASS for " + sm +
                         " and are JIT-compiled from " + c.best_ptx);
    f.evidence.push_back(archs());
    f.evidence.push_back(std::to_string(c.ptx_jit_bytes) + " bytes of PTX to JIT-compile at first use");
    out.push_back(std::move(f));
  }
}

void add_fatbin_size_finding(const std::string& path, const std::optional<FatbinBytes>& bytes, std::vector<Finding>& out) {
  constexpr std::uint64_t kLarge = 64ull << 20;  // device code worth a look
  if (!bytes) return;
  const FatbinBytes& b = *bytes;
  if (b.stored_bytes < kLarge || b.used_stored_bytes * 2 > b.stored_bytes) return;
  auto mib = [](std::uint64_t v) { return std::to_string((v + (1u << 19)) >> 20) + " MiB"; };
  const std::uint64_t other = b.stored_bytes - b.used_stored_bytes;
  const std::string sm = "sm_" + std::to_string(b.sm);
  Finding f = make(FindingId::fatbin_mostly_other_archs, path,
                   symbols::base_name(path) + ": " + mib(other) + " of " + mib(b.stored_bytes) + " of device code (" +
                       std::to_string(other * 100 / b.stored_bytes) + "%) is for other GPUs than " + sm + "; " + sm + " uses " +
                       mib(b.used_stored_bytes));
  std::vector<const ArchBytes*> archs;
  for (const auto& a : b.archs) archs.push_back(&a);
  std::stable_sort(archs.begin(), archs.end(), [](const ArchBytes* x, const ArchBytes* y) { return x->stored_bytes > y->stored_bytes; });
  for (std::size_t i = 0; i < archs.size() && i < kMaxEvidence; ++i) {
    const ArchBytes& a = *archs[i];
    f.evidence.push_back(a.arch + ": " + mib(a.stored_bytes) + " stored (" + mib(a.uncompressed_bytes) + " uncompressed) in " +
                         std::to_string(a.entries) + " entries" +
                         (a.used_entries > 0 ? "; " + std::to_string(a.used_entries) + " used on " + sm : std::string()));
  }
  if (archs.size() > kMaxEvidence) f.evidence.push_back("... and " + std::to_string(archs.size() - kMaxEvidence) + " more architectures");
  out.push_back(std::move(f));
}

void mark_vendor_fatbin_findings(std::vector<Finding>& findings, const std::function<bool(const std::string&)>& in_vendor_package) {
  for (auto& f : findings)
    if ((f.id == FindingId::fatbin_no_sass || f.id == FindingId::fatbin_mostly_other_archs) && in_vendor_package(f.subject))
      f.vendor_internal = true;
}

}  // namespace cudashim::policy
