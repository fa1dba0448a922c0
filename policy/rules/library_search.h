// policy/rules/library_search.h: the rules on what the loader would find on disk (the doctor's):
// a needed library it finds nowhere (library.not-found, with the requirement a framework pins),
// and the driver a process here would load: none (driver.not-found) or the link-time stub
// (driver.stub-libcuda). The search itself is symbols/loader_search.h's. A file of its own,
// like version_shortfalls.h: what it calls links libelf, which the preload library must not.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "symbols/loader_search.h"
#include "symbols/python_frameworks.h"

namespace cudashim::policy {

// `name`, needed by `needers` (the first names the finding) and not found (`search`): the
// files that need it, the places tried, and the pip requirement when one of `frameworks` pins it
// (the framework whose site-packages holds the first needer wins).
Finding library_not_found(const std::string& name, const std::vector<std::string>& needers, const symbols::Resolution& search,
                          const std::vector<symbols::FrameworkInfo>& frameworks);

// The libcuda `needed` (a DT_NEEDED of the file at `path`, as the loader resolves it) when it is
// the link-time stub; nullopt otherwise.
std::optional<Finding> stub_needed(const std::string& path, const symbols::Resolution& needed);

// The driver as any process here would find it: `driver` for libcuda.so.1 (the runtime's),
// `unversioned` for libcuda.so (Triton's): the stub for either, or no libcuda.so.1 at all.
void add_driver_search_findings(const symbols::Resolution& driver, const symbols::Resolution& unversioned, std::vector<Finding>& out);

}  // namespace cudashim::policy
