// Findings: what a check saw, where, and what to do. The rows live in findings.def.
#pragma once

#include <string>
#include <vector>

namespace cudashim::symbols {

enum class Severity { info, warning, error };

// "info", "warning", "error".
constexpr const char* severity_name(Severity s) {
  return s == Severity::error ? "error" : s == Severity::warning ? "warning" : "info";
}

enum class FindingId {
#define FINDING(e, id, sev, title, advice) e,
#include "symbols/findings.def"
#undef FINDING
};

// The fixed facts of one finding kind.
struct FindingInfo {
  FindingId id;
  const char* name;  // the stable id, e.g. "versioned-symbol-shortfall"
  Severity severity;
  const char* title;
  const char* advice;
};

inline constexpr FindingInfo kFindings[] = {
#define FINDING(e, id, sev, title, advice) {FindingId::e, id, Severity::sev, title, advice},
#include "symbols/findings.def"
#undef FINDING
};

// The row of `id`. Precondition: a FindingId value (the table has one row per enumerator).
constexpr const FindingInfo& finding_info(FindingId id) { return kFindings[static_cast<int>(id)]; }

// One finding: what was seen (message), about what (subject, usually a path), and the facts
// behind it (evidence, one line each: paths, reasons, versions, counts).
struct Finding {
  FindingId id;
  std::string subject;
  std::string message;
  std::vector<std::string> evidence;
  const FindingInfo& info() const { return finding_info(id); }
};

}  // namespace cudashim::symbols
