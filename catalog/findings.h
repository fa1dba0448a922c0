// catalog/findings.h: the findings table (catalog/findings.def) as data: ids, domains,
// severities, titles, fixes, the old ids still read as aliases; and Finding, the value a
// check returns. No CUDA header and no state: the runtime rules (policy/), the library
// checks (symbols/, policy/), doctor and the CLI (tools/) all read it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudashim {

namespace recorder {
struct CallSite;  // recorder/callsites.h: a FindingSite points at one (never read here)
}

// What a finding is about: the groups of `cudashim findings` and docs/findings.md.
enum class FindingDomain : uint8_t {
#define CUDASHIM_FINDING_DOMAIN(NAME, HEADING) NAME,
#include "catalog/findings.def"
  kCount
};
inline constexpr size_t kFindingDomainCount = static_cast<size_t>(FindingDomain::kCount);

// Returns the domain's name (the part of an id before the dot), e.g. "sync".
const char* domain_name(FindingDomain d);
// Returns the domain's heading in docs/findings.md, e.g. "Synchronization".
const char* domain_heading(FindingDomain d);

// Ordered: a higher value is worse (doctor sorts and exits on it).
enum class Severity : uint8_t { info, warning, error };

// Returns "info", "warning" or "error".
constexpr const char* severity_name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "info";
}

// FindingId: one value per row. `none` (== kCount) is no finding: what a rule returns
// when a call site shows nothing, and what find_finding returns for an unknown id.
enum class FindingId : uint8_t {
#define CUDASHIM_FINDING(ENUM, DOMAIN, ID, SEVERITY, TRAIT, ALIAS, TITLE, FIX) ENUM,
#include "catalog/findings.def"
  kCount,
  none = kCount
};
inline constexpr size_t kFindingCount = static_cast<size_t>(FindingId::kCount);

// The TRAIT column of catalog/findings.def.
enum class FindingTrait : uint8_t { NO_TRAIT, DRAINS_QUEUE, DRAINS_QUEUE_HOST_STAGED };

// True for a row whose calls drain the GPU's queue (DRAINS_QUEUE and DRAINS_QUEUE_HOST_STAGED).
constexpr bool drains_queue(FindingTrait t) {
  return t == FindingTrait::DRAINS_QUEUE || t == FindingTrait::DRAINS_QUEUE_HOST_STAGED;
}

// The fixed facts of one finding kind.
struct FindingInfo {
  FindingId id;
  FindingDomain domain;
  const char* name;   // the stable id, "domain.name", e.g. "driver.too-old"
  Severity severity;
  FindingTrait trait;
  const char* alias;  // the id reports written before the one table carried; "" when the same
  const char* title;  // what was seen
  const char* fix;    // what to do, in one sentence
};

inline constexpr FindingInfo kFindings[kFindingCount] = {
#define CUDASHIM_FINDING(ENUM, DOMAIN, ID, SEVERITY, TRAIT, ALIAS, TITLE, FIX) \
  {FindingId::ENUM, FindingDomain::DOMAIN, ID, Severity::SEVERITY, FindingTrait::TRAIT, ALIAS, TITLE, FIX},
#include "catalog/findings.def"
};

// Returns the row of `id`. pre: id != FindingId::none.
constexpr const FindingInfo& finding_info(FindingId id) { return kFindings[static_cast<size_t>(id)]; }

// Returns the row whose id or alias is exactly `id` ("driver.too-old" and its old
// "driver-too-old" alike), or FindingId::none when no row has it.
FindingId find_finding(std::string_view id);

// A call site of a runtime finding and the blocked ticks there (policy/rules/sync.cpp fills
// it, report/ renders it).
struct FindingSite {
  const recorder::CallSite* site = nullptr;
  uint64_t ticks = 0;  // blocked ticks at that site
};

// One finding: what was seen (message), about what (subject, usually a path or a
// variable), and the facts behind it (evidence, one line each: paths, reasons, versions,
// counts). The library, driver, toolchain and fatbin checks fill those; the runtime rules
// (policy/sync_rules.h: evaluate_findings) fill the calls, cost and call sites below instead,
// the costliest site first (none for a process-wide finding). Findings at sites inside one
// framework are grouped apart from the user's, per framework.
struct Finding {
  FindingId id;
  std::string subject;
  std::string message;
  std::vector<std::string> evidence;
  // Its message holds a total of the whole run so far (the module loads' MiB and seconds): the
  // live log names it once, at the final re-read, with the figures the report holds.
  bool run_total = false;
  // Seen inside NVIDIA's or a framework's own files (site-packages/nvidia, torch, triton, ...),
  // where the user can change nothing: an info whatever its row's severity (the doctor shows it
  // only with --verbose, the live log only at log level info), never an exit code.
  bool vendor_internal = false;
  // The exact fix for this case (pip install "nvidia-nvshmem-cu12==3.3.20", or why there is
  // nothing to do); "" = the row's generic one.
  std::string exact_fix{};  // initialized: the braced Findings that leave it out draw no warning
  // The runtime rules' part: the calls and blocked time behind it, and where.
  uint64_t count = 0;
  uint64_t blocked_ns = 0;
  std::vector<FindingSite> sites{};
  std::string framework{};  // "" for the user's own sites (policy::site_framework)
  uint64_t steps = 0;       // steady-state steps it hit: the most visits of one of its sites (0: process-wide)
  uint64_t gpu_idle_after_ns = 0;  // GPU idle from its sites' drains to the next submitted work (shim/drain_idle.h)
  // Its price (policy::evaluate_findings, docs/findings.md "What a finding costs"), 0 when
  // process-wide (steps 0): the mean time between two visits of its costliest site (a step),
  // the steady-state loop window it was judged in, and the step time the program would save
  // per step without the habit (blocked + GPU idle after, minus what overlaps).
  uint64_t step_ns = 0;
  uint64_t loop_ns = 0;
  uint64_t saving_per_step_ns = 0;
  // Other rows' aspects of the same habit at the same line, merged into this one finding
  // (cupy.asnumpy: a read-back whose copy also goes to pageable memory).
  std::vector<FindingId> also{};
  // Set: the severity its rule decided (policy::finding_severity: info at a framework's sites,
  // or info this run with the reason as exact_fix), whatever the row's or vendor_internal say.
  std::optional<Severity> severity_override{};
  const FindingInfo& info() const { return finding_info(id); }
  uint64_t blocked_per_step_ns() const { return steps ? blocked_ns / steps : 0; }
  uint64_t idle_after_per_step_ns() const { return steps ? gpu_idle_after_ns / steps : 0; }
  // The share of the loop's wall time it blocked, and of a step its predicted saving (0..1).
  double loop_share() const { return loop_ns ? static_cast<double>(blocked_ns) / loop_ns : 0.0; }
  double step_share() const { return step_ns ? static_cast<double>(saving_per_step_ns) / step_ns : 0.0; }
  Severity severity() const {
    return severity_override ? *severity_override : vendor_internal ? Severity::info : info().severity;
  }
  const char* fix() const { return exact_fix.empty() ? info().fix : exact_fix.c_str(); }
};

}  // namespace cudashim
