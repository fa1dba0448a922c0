// utf8.h: text that is valid UTF-8 whatever bytes it was given. A process hands the shim
// bytes that need not be UTF-8 (its argv, its executable's path, file names) and JSON text
// must be UTF-8 (RFC 8259, section 8.1): a strict parser (Python's json, nlohmann, jq)
// refuses the whole document for one stray byte. So each byte that does not belong to a
// well-formed UTF-8 sequence is written as the four characters \xNN (two lower-case hex
// digits), which is what Python's "backslashreplace" error handler does; everything else
// passes unchanged. docs/report-schema.md ("Strings") says why this and not U+FFFD.
//
// Header-only: recorder/json_writer.cpp (the one JSON escaper) writes every string of the
// report, trace and stream through it, and the CLI (tools/, which may not include the
// writer) gives its own JSON the same form.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace cudashim {

// Returns the length (1-4) of the well-formed UTF-8 sequence that starts `s`, or 0 when
// its first byte starts none: a continuation byte, C0/C1 or F5-FF, an overlong form, a
// surrogate (U+D800-DFFF), a code point past U+10FFFF, or a sequence cut short (Unicode
// 15.0, table 3-7). pre: !s.empty().
inline std::size_t utf8_sequence_length(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c == 0xE0) n = 3, lo = 0xA0;
  else if (c == 0xED) n = 3, hi = 0x9F;
  else if (c >= 0xE1 && c <= 0xEF) n = 3;
  else if (c == 0xF0) n = 4, lo = 0x90;
  else if (c == 0xF4) n = 4, hi = 0x8F;
  else if (c >= 0xF1 && c <= 0xF3) n = 4;
  else return 0;
  if (s.size() < n || b(1) < lo || b(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  return n;
}

// True when every byte of `s` belongs to a well-formed UTF-8 sequence.
inline bool is_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Appends `s` to `out` with each byte outside a well-formed UTF-8 sequence as the text
// \xNN; `out` gets valid UTF-8 when it had it. Also escapes the C0 controls and DEL the
// same way when `controls` is set (text meant for a terminal: no escape sequence of a
// file reaches it).
inline void append_utf8(std::string& out, std::string_view s, bool controls = false) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0 || (controls && (c < 0x20 || c == 0x7F))) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
}

// `s` as valid UTF-8 (append_utf8 into a new string).
inline std::string utf8_text(std::string_view s, bool controls = false) {
  std::string out;
  out.reserve(s.size());
  append_utf8(out, s, controls);
  return out;
}

// The bytes `s` stands for when it was written by append_utf8: each \xNN becomes the byte
// 0xNN. A text that held "\x" and two hex digits of its own reads the same: callers try it
// only where the text as written names nothing (a file that is not there).
inline std::string utf8_bytes_back(std::string_view s) {
  const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] == 'x' && hex(s[i + 2]) >= 0 && hex(s[i + 3]) >= 0) {
      out += static_cast<char>(hex(s[i + 2]) * 16 + hex(s[i + 3]));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace cudashim
