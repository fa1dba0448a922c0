// catalog/findings.h: the findings table (catalog/findings.def) as data: ids, domains,
// severities, titles, fixes, the old ids still read as aliases; and Finding, the value a
// check returns and `cudashim report` reads back from a report (the one finding type of the
// tree). No CUDA header and no state: the runtime rules (policy/), the library checks
// (symbols/, policy/), the report, the live log, doctor and the CLI's reader (tools/) all use it.
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

// Returns the severity named "info", "warning" or "error"; none for any other text.
constexpr std::optional<Severity> severity_from_name(std::string_view s) {
  if (s == "info") return Severity::info;
  if (s == "warning") return Severity::warning;
  if (s == "error") return Severity::error;
  return std::nullopt;
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

// A native frame as a report records it (findings[].sites[].frames[] and where_frame): a place
// in a file on disk that `cudashim report` resolves to file:line when it reads the report.
struct RecordedFrame {
  std::optional<std::string> file;
  std::optional<uint64_t> address;  // a link-time address in `file`
  std::string build_id;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

// A call site of a finding as a report records it (findings[].sites[]): the value form of a
// FindingSite, for a finding read back from a report, where no recorder::CallSite exists.
struct RecordedSite {
  std::string where;                         // as recorded ("?" when missing)
  std::string api;                           // the exact ABI called there
  std::optional<RecordedFrame> where_frame;  // when recorded as an object
  std::optional<std::vector<std::optional<RecordedFrame>>> frames;  // when recorded; null frames stay null
  uint64_t count = 0, blocked_ns = 0;
  std::optional<uint64_t> gpu_idle_after_ns;  // GPU idle after its drains (absent in older reports)
  std::vector<std::string> python;            // the Python stack at the first hit, innermost first
  bool sampled = false;                       // a waiter's site: count is samples, no blocked time
  std::optional<std::string> where_source;    // the resolved text of where_frame (tools/report_reader.cpp)
  std::vector<std::string> native_source;     // each of frames resolved (tools/report_reader.cpp)
  // The text of the site for people: the resolved source line when there is one, else `where`.
  const std::string& text() const { return where_source ? *where_source : where; }
};

// What a report read back says of a finding beyond a live Finding's own fields (the reader,
// tools/report_model.cpp, fills it; the shim, the doctor and the live log leave it empty). The
// reader also fills Finding's id (FindingId::none for an id this build has no row for),
// severity_override (the report's severity), exact_fix (the report's fix), message, count,
// blocked_ns and steps.
struct RecordedFinding {
  // The id as the report wrote it, an old alias read as today's id: what name() returns for an
  // id this build does not know (a newer report), which is rendered by this text.
  std::string id;
  std::string title;      // gpu_time.findings[]: as written
  std::string diagnosis;  // gpu_time.findings[]: the device's diagnosis behind gpu.idle
  int64_t device = 0;     // gpu_time.findings[]: its device
  // The per-step figures as written, each absent from reports written before it.
  std::optional<uint64_t> gpu_idle_after_per_step_ns, predicted_saving_per_step_ns, step_ns;
  std::vector<std::string> also;    // other rows' ids merged in, as written (an unknown one kept)
  std::vector<RecordedSite> sites;  // instead of Finding::sites
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
  // A finding read back from a report: what only the report has (RecordedFinding).
  RecordedFinding recorded{};
  // pre: id != FindingId::none (a finding read back may have none: name(), severity() and fix()
  // answer for it).
  const FindingInfo& info() const { return finding_info(id); }
  // The stable id ("sync.scalar-readback"); for a finding read back whose id this build has no
  // row for, the id as the report wrote it.
  const char* name() const { return id == FindingId::none ? recorded.id.c_str() : info().name; }
  uint64_t blocked_per_step_ns() const { return steps ? blocked_ns / steps : 0; }
  uint64_t idle_after_per_step_ns() const { return steps ? gpu_idle_after_ns / steps : 0; }
  // The share of the loop's wall time it blocked, and of a step its predicted saving (0..1).
  double loop_share() const { return loop_ns ? static_cast<double>(blocked_ns) / loop_ns : 0.0; }
  double step_share() const { return step_ns ? static_cast<double>(saving_per_step_ns) / step_ns : 0.0; }
  // An id this build does not know, with no severity of its own, is a warning.
  Severity severity() const {
    return severity_override ? *severity_override
           : vendor_internal ? Severity::info
           : id == FindingId::none ? Severity::warning
                                   : info().severity;
  }
  const char* fix() const { return !exact_fix.empty() ? exact_fix.c_str() : id == FindingId::none ? "" : info().fix; }
};

}  // namespace cudashim
