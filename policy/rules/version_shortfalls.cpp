// policy/rules/version_shortfalls.cpp: see version_shortfalls.h.
#include "policy/rules/version_shortfalls.h"

#include <map>
#include <string>

#include "symbols/path_names.h"
#include "symbols/resolution_text.h"

namespace cudashim::policy {
namespace {

constexpr std::size_t kMaxEvidence = 12;  // lines of one list in one finding

}  // namespace

void add_version_shortfall_findings(const std::vector<symbols::VersionShortfall>& shortfalls, std::vector<Finding>& out) {
  std::map<std::pair<std::string, int>, std::vector<const symbols::VersionShortfall*>> groups;  // (file, kind) -> items
  for (const auto& s : shortfalls) {
    if (s.weak || s.kind == symbols::ShortfallKind::provider_not_found) continue;  // weak: the loader only warns
    groups[{s.needed_file, static_cast<int>(s.kind)}].push_back(&s);
  }
  for (const auto& [key, items] : groups) {
    const symbols::VersionShortfall& first = *items.front();
    const bool symbol = first.kind == symbols::ShortfallKind::missing_symbol;
    Finding f{symbol ? FindingId::versioned_symbol_shortfall : FindingId::version_node_missing, first.library,
              symbols::base_name(first.library) + ": " + symbols::describe(first), {}};
    std::size_t functions = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i == kMaxEvidence) {
        f.evidence.push_back("... and " + std::to_string(items.size() - kMaxEvidence) + " more");
        break;
      }
      f.evidence.push_back((symbol ? "needs " + items[i]->symbol + "@" : "needs version node ") + items[i]->version +
                           " from " + items[i]->needed_file);
    }
    for (const auto* s : items) functions += s->is_function ? 1 : 0;
    symbols::add_resolution_evidence(first.resolution, f.evidence);
    if (symbol)
      f.evidence.push_back(functions == items.size()
                               ? "all are functions: the load fails with RTLD_NOW/LD_BIND_NOW, else at the first call"
                               : "some are data: the load itself fails");
    if (!first.note.empty()) f.evidence.push_back(first.note);
    out.push_back(std::move(f));
  }
}

}  // namespace cudashim::policy
