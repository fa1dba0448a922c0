// leaks.h: allocations still live at exit, grouped by the call site that made them.
#pragma once
#include <string>

namespace cudashim::policy {

// The "leaks" section of the report: live allocations grouped by call site and
// kind, largest first (at most 20 groups), with count, bytes and the oldest age.
std::string leaks_report_json();

}  // namespace cudashim::policy
