// printable.h: text from the environment, a policy file or the process, as cudashim may print
// it on a terminal. A value can hold anything: an escape sequence (ESC [ ... that recolours,
// retitles or rewrites the user's terminal), a newline that fakes a log line of its own, bytes
// that are not UTF-8. Each such byte is written as \xHH (\n, \r, \t as such), so a message shows
// what the value holds and does nothing else. The only terminal escaper: the policy's messages
// and shim/log.h, through which every log line of the preload library goes, use it.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace cudashim::policy {

// Calls `put(c)` for each character of `s` made printable, stopping after `max` bytes of `s`
// (then "..."). C0 controls, DEL, C1 controls (U+0080-U+009F, which some terminals obey) and
// bytes that are not well-formed UTF-8 become \xHH; `keep_newlines` leaves '\n' as it is (for
// a log line whose own text spans lines).
template <class Put>
void for_each_printable(std::string_view s, Put&& put, std::size_t max = std::string_view::npos,
                        bool keep_newlines = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto escape = [&](unsigned char c) {
    put('\\');
    if (c == '\n' || c == '\r' || c == '\t') {
      put(c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
      return;
    }
    put('x'), put(kHex[c >> 4]), put(kHex[c & 15]);
  };
  const std::size_t end = s.size() < max ? s.size() : max;
  for (std::size_t i = 0; i < end;) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) escape(c);
      else put(static_cast<char>(c));
      ++i;
      continue;
    }
    // The length of a well-formed UTF-8 sequence starting here (RFC 3629), 0 if none.
    const std::size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n != 0 && i + n > end && i + n <= s.size()) break;  // cut at `max`: the "..." says so
    bool ok = n != 0 && i + n <= end;
    for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
    if (ok && n == 3) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xe0 && c1 < 0xa0) && !(c == 0xed && c1 > 0x9f);  // overlong; surrogates
    }
    if (ok && n == 4) {
      const auto c1 = static_cast<unsigned char>(s[i + 1]);
      ok = !(c == 0xf0 && c1 < 0x90) && !(c == 0xf4 && c1 > 0x8f);  // overlong; above U+10FFFF
    }
    if (ok && n == 2 && c == 0xc2 && static_cast<unsigned char>(s[i + 1]) < 0xa0) ok = false;  // C1 controls
    if (!ok) {
      escape(c);
      ++i;
      continue;
    }
    for (std::size_t k = 0; k < n; ++k) put(s[i + k]);
    i += n;
  }
  if (end < s.size()) put('.'), put('.'), put('.');
}

// `s` made printable (for_each_printable), at most `max` bytes of it.
inline std::string printable(std::string_view s, std::size_t max = std::string_view::npos) {
  std::string out;
  out.reserve(s.size() < max ? s.size() : max);
  for_each_printable(s, [&](char c) { out += c; }, max);
  return out;
}

}  // namespace cudashim::policy
