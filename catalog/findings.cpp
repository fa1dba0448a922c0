// catalog/findings.cpp: the texts of the findings table's domains, the lookup by id or
// alias, and the checks that keep the ids one style.
#include "catalog/findings.h"

namespace cudashim {
namespace {

constexpr const char* kDomainNames[] = {
#define CUDASHIM_FINDING_DOMAIN(NAME, HEADING) #NAME,
#include "catalog/findings.def"
};
constexpr const char* kDomainHeadings[] = {
#define CUDASHIM_FINDING_DOMAIN(NAME, HEADING) HEADING,
#include "catalog/findings.def"
};

// Every id is "<its domain>.<lowercase-dashed-name>".
constexpr bool ids_dotted() {
  for (const FindingInfo& f : kFindings) {
    const std::string_view id(f.name), domain(kDomainNames[static_cast<size_t>(f.domain)]);
    if (id.size() <= domain.size() + 1 || id.substr(0, domain.size()) != domain || id[domain.size()] != '.') return false;
    for (char c : id.substr(domain.size() + 1))
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}
static_assert(ids_dotted(), "catalog/findings.def: an id is not \"<domain>.<lowercase-dashed-name>\"");

// No string names two rows: ids and aliases are all distinct, and no alias is an id.
constexpr bool names_unique() {
  for (size_t i = 0; i < kFindingCount; ++i)
    for (size_t j = 0; j < kFindingCount; ++j) {
      const std::string_view a(kFindings[i].name), alias(kFindings[j].alias);
      if (i != j && a == kFindings[j].name) return false;
      if (!alias.empty() && a == alias) return false;
      if (i != j && !alias.empty() && alias == kFindings[i].alias) return false;
    }
  return true;
}
static_assert(names_unique(), "catalog/findings.def: an id or alias names two rows");

// The enum and the table agree row for row (finding_info indexes by the enum).
constexpr bool rows_in_order() {
  for (size_t i = 0; i < kFindingCount; ++i)
    if (static_cast<size_t>(kFindings[i].id) != i) return false;
  return true;
}
static_assert(rows_in_order());

}  // namespace

const char* domain_name(FindingDomain d) { return kDomainNames[static_cast<size_t>(d)]; }

const char* domain_heading(FindingDomain d) { return kDomainHeadings[static_cast<size_t>(d)]; }

FindingId find_finding(std::string_view id) {
  if (id.empty()) return FindingId::none;
  for (const FindingInfo& f : kFindings)
    if (id == f.name || id == f.alias) return f.id;
  return FindingId::none;
}

}  // namespace cudashim
