// symbols/resolution_text.cpp: see resolution_text.h.
#include "symbols/resolution_text.h"

namespace cudashim::symbols {

std::string reason_text(const Resolution& r) {
  std::string text = reason_name(r.reason);
  if ((r.reason == SearchReason::rpath || r.reason == SearchReason::runpath) && !r.from.empty()) text += " of " + r.from;
  return text;
}

void add_resolution_evidence(const Resolution& r, std::vector<std::string>& out) {
  if (r.found())
    out.push_back("the loader picks " + r.path + " [" + reason_text(r) + "]");
  else if (!r.error.empty())
    out.push_back("the loader stops at " + r.error);
  else
    out.push_back("the loader finds no " + r.name);
  std::size_t shown = 0;
  const std::size_t before = r.found() && !r.tried.empty() ? r.tried.size() - 1 : r.tried.size();
  for (std::size_t i = 0; i < before; ++i) {
    const auto& t = r.tried[i];
    if (shown++ == kMaxTriedShown) {
      out.push_back("  ... and " + std::to_string(before - kMaxTriedShown) + " more places");
      break;
    }
    const std::string where = !t.path.empty() ? t.path : !t.dir.empty() ? t.dir : t.from;
    out.push_back("  tried " + where + " [" + reason_name(t.reason) + "]: " + t.outcome);
  }
}

}  // namespace cudashim::symbols
