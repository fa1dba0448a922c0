// symbols/resolution_text.h: a loader search's answer (symbols/loader_search.h) as the lines a
// finding's evidence shows: the file the loader picks and why, or where it stopped, and the
// places it tried before.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "symbols/loader_search.h"

namespace cudashim::symbols {

// The places tried that one finding lists; the rest are counted.
inline constexpr std::size_t kMaxTriedShown = 12;

// Why the loader took the file: "LD_LIBRARY_PATH", "runpath of /x/libfoo.so", ...
std::string reason_text(const Resolution& r);

// Appends "the loader picks PATH [reason]" (or where it stopped, or that it found none) and
// the places tried before it, at most kMaxTriedShown of them.
void add_resolution_evidence(const Resolution& r, std::vector<std::string>& out);

}  // namespace cudashim::symbols
