// json_writer.cpp: see json_writer.h.
#include "recorder/json_writer.h"

#include <fmt/format.h>

#include <iterator>

#include "recorder/utf8.h"

namespace cudashim {

void JsonWriter::separate(Level& l) {
  if (l.count++ > 0) out_ += ',';
  if (l.indent >= 0) {
    out_ += '\n';
    out_.append(static_cast<size_t>(l.indent), ' ');
  } else if (l.count > 1) {
    out_ += ' ';
  }
}

void JsonWriter::before_value() {
  if (keyed_) {
    keyed_ = false;
    return;
  }
  if (!levels_.empty()) separate(levels_.back());
}

JsonWriter& JsonWriter::key(std::string_view name) {
  separate(levels_.back());
  escaped(name);
  out_ += ": ";
  keyed_ = true;
  return *this;
}

JsonWriter::Scope JsonWriter::open(char open, char close, JsonLayout layout) {
  before_value();
  out_ += open;
  levels_.push_back(Level{close, layout.indent, open == '{'});
  return Scope(*this);
}

void JsonWriter::close() {
  const Level l = levels_.back();
  levels_.pop_back();
  if (l.indent >= 0 && l.count > 0) {
    out_ += '\n';
    out_.append(static_cast<size_t>(l.indent >= 2 ? l.indent - 2 : 0), ' ');
  }
  out_ += l.close;
}

void JsonWriter::literal(std::string_view text) {
  before_value();
  out_ += text;
}

void JsonWriter::unsigned_number(unsigned long long v) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", v);
}

void JsonWriter::signed_number(long long v) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{}", v);
}

void JsonWriter::value(JsonFixed f) {
  before_value();
  fmt::format_to(std::back_inserter(out_), "{:.{}f}", f.value, f.decimals);
}

// The one JSON string escaper: quotes and backslashes escaped, \n \t \r by name, other control characters as \u00XX
// (RFC 8259, section 7). Valid UTF-8 passes as it is; each byte outside a well-formed UTF-8 sequence becomes the text
// \xNN (recorder/utf8.h), written here as "\\xNN": the document stays valid JSON whatever bytes the process gave.
void JsonWriter::string(std::string_view s) {
  before_value();
  escaped(s);
}

void JsonWriter::escaped(std::string_view s) {
  out_ += '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      if (const size_t n = utf8_sequence_length(s.substr(i)); n > 0) {
        out_.append(s.data() + i, n);
        i += n;
      } else {
        fmt::format_to(std::back_inserter(out_), "\\\\x{:02x}", c);
        ++i;
      }
      continue;
    }
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      case '\r': out_ += "\\r"; break;
      default:
        if (c < 0x20)
          fmt::format_to(std::back_inserter(out_), "\\u{:04x}", c);
        else
          out_ += static_cast<char>(c);
    }
    ++i;
  }
  out_ += '"';
}

}  // namespace cudashim
