// policy/rules/version_shortfalls.h: the versioned-symbol rule on files on disk (the doctor's):
// what a file needs that the library the loader would give it lacks. Its live counterpart, on the
// libraries a process loaded, is missing_import_findings in policy/rules/libraries.h. A file of
// its own: what it calls (symbols/version_check.h, the loader search) links libelf, which the
// preload library, linking policy/rules/libraries.cpp, must not.
#pragma once
#include <vector>

#include "catalog/findings.h"
#include "symbols/version_check.h"

namespace cudashim::policy {

// The versioned symbols (library.versioned-symbol-shortfall) and version nodes
// (library.version-node-missing) a file needs and the library the loader would give it lacks
// (symbols::check_versions_in_tree): one finding per needing file, needed file and kind, with
// the loader's search as evidence. Weak references (the loader only warns) and providers not
// found (library.not-found says so) are left out.
void add_version_shortfall_findings(const std::vector<symbols::VersionShortfall>& shortfalls, std::vector<Finding>& out);

}  // namespace cudashim::policy
