// json_writer.h: the JSON writer. Every JSON text the preload library writes (the report,
// the event stream's lines, the trace) goes through it, and its string() is the one
// escaper in the tree; callers name members and values, never JSON syntax. It lives in
// recorder/, the lowest layer that writes JSON (the event stream), so that recorder/,
// report/ and shim/ can all include it (tests/hygiene/check_layers.py states the rule).
//
// Not for signal context: it appends to a std::string. The crash record
// (recorder/flight_recorder.cpp) is written without allocating, by its own fixed buffer.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace cudashim {

// How a container places its elements: on one line, ", " between them (the default), or
// each on its own line indented by `indent` spaces, with the closing bracket on a line of
// its own indented by two fewer. An empty container is "{}" or "[]" either way.
struct JsonLayout {
  int indent = -1;  // -1: on one line
};
inline constexpr JsonLayout kOneLine{};
constexpr JsonLayout json_lines(int indent) { return JsonLayout{indent}; }

// A number printed with a fixed count of decimals ("{:.4f}"): shares, microseconds.
struct JsonFixed {
  double value;
  int decimals;
};

class JsonWriter {
 public:
  // Appends to `out`.
  explicit JsonWriter(std::string& out) : out_(out) {}
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;

  // An open object or array; closes it when it goes out of scope.
  class Scope {
   public:
    ~Scope() { w_.close(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    friend class JsonWriter;
    explicit Scope(JsonWriter& w) : w_(w) {}
    JsonWriter& w_;
  };

  // Opens an object (an array) as the next value. pre: in an array, after key(), or first.
  [[nodiscard]] Scope object(JsonLayout layout = kOneLine) { return open('{', '}', layout); }
  [[nodiscard]] Scope array(JsonLayout layout = kOneLine) { return open('[', ']', layout); }

  // Names the next value. pre: directly inside an object.
  JsonWriter& key(std::string_view name);

  // Values. A string is escaped (RFC 8259) and made valid UTF-8: each byte outside a
  // well-formed UTF-8 sequence is written as the text \xNN (recorder/utf8.h).
  void string(std::string_view s);
  void value(std::string_view s) { string(s); }
  void value(const char* s) { s ? string(s) : null(); }  // nullptr: null
  void value(const std::string& s) { string(s); }
  void value(bool b) { literal(b ? "true" : "false"); }
  void value(std::nullptr_t) { null(); }
  void value(JsonFixed f);
  template <typename T>
    requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
  void value(T v) {
    if constexpr (std::is_signed_v<T>)
      signed_number(v);
    else
      unsigned_number(v);
  }
  void null() { literal("null"); }

  // key(name) then value(v).
  template <typename T>
  void member(std::string_view name, const T& v) {
    key(name);
    value(v);
  }

 private:
  struct Level {
    char close;
    int indent;
    bool object;
    int count = 0;
  };
  Scope open(char open, char close, JsonLayout layout);
  void close();
  void before_value();
  void literal(std::string_view text);
  void escaped(std::string_view s);
  void unsigned_number(unsigned long long v);
  void signed_number(long long v);
  void separate(Level& l);

  std::string& out_;
  std::vector<Level> levels_;
  bool keyed_ = false;  // key() was written, its value not yet
};

}  // namespace cudashim
