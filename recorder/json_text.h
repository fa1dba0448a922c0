// json_text.h: JSON string literals, the one escaper every report section uses.
#pragma once
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace cudashim {

// Returns `s` as a JSON string literal (quotes, backslashes and control characters escaped).
inline std::string json_str(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += static_cast<char>(c);
    } else if (c < 0x20) {
      fmt::format_to(std::back_inserter(o), "\\u{:04x}", c);
    } else {
      o += static_cast<char>(c);
    }
  }
  return o + "\"";
}

}  // namespace cudashim
