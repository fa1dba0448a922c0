// json_fields.cpp: see json_fields.h.
#include "tools/json_fields.h"

#include <fmt/format.h>

#include <climits>
#include <limits>
#include <vector>

#include "recorder/utf8.h"

namespace cudashim::tools {
namespace {

using nlohmann::json;

// What a value is, for a problem: "a string", "the number -3".
std::string describe(const json& j) {
  switch (j.type()) {
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return j.get<bool>() ? "true" : "false";
    case json::value_t::number_integer: return fmt::format("the number {}", j.get<int64_t>());
    case json::value_t::number_unsigned: return fmt::format("the number {}", j.get<uint64_t>());
    case json::value_t::number_float: return fmt::format("the number {}", j.get<double>());
    default: return j.type_name();
  }
}

// Each conversion: true and `out` set when `j` has the type, else false.
bool convert(const json& j, uint64_t& out) {
  if (j.is_number_unsigned()) return out = j.get<uint64_t>(), true;
  if (j.is_number_integer() && j.get<int64_t>() >= 0) return out = static_cast<uint64_t>(j.get<int64_t>()), true;
  return false;
}
bool convert(const json& j, int64_t& out) {
  if (j.is_number_unsigned()) {
    if (j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    return out = static_cast<int64_t>(j.get<uint64_t>()), true;
  }
  if (j.is_number_integer()) return out = j.get<int64_t>(), true;
  return false;
}
bool convert(const json& j, int& out) {
  int64_t v = 0;
  if (!convert(j, v) || v < INT_MIN || v > INT_MAX) return false;
  return out = static_cast<int>(v), true;
}
bool convert(const json& j, double& out) {
  if (!j.is_number()) return false;
  return out = j.get<double>(), true;
}
bool convert(const json& j, bool& out) {
  if (!j.is_boolean()) return false;
  return out = j.get<bool>(), true;
}
bool convert(const json& j, std::string& out) {
  if (!j.is_string()) return false;
  return out = j.get<std::string>(), true;
}

template <typename T>
constexpr const char* expected_name() {
  if constexpr (std::is_same_v<T, uint64_t>) return "an unsigned integer";
  else if constexpr (std::is_same_v<T, int64_t>) return "an integer";
  else if constexpr (std::is_same_v<T, int>) return "an integer of at most 10 digits";
  else if constexpr (std::is_same_v<T, double>) return "a number";
  else if constexpr (std::is_same_v<T, bool>) return "true or false";
  else return "a string";
}

std::string member_path(const std::string& parent, std::string_view key) {
  const std::string shown = utf8_text(key, /*controls=*/true);
  return parent.empty() ? shown : parent + "." + shown;
}

// Builds the document from nlohmann's SAX events, refusing containers below kMaxJsonDepth:
// at the first one the parse stops (sax_parse returns false), so nothing past it is read.
//
// Not json::parse with a callback: its builder (json_sax_dom_callback_parser, nlohmann 3.11)
// scans the whole parent container at each object's end, looking for a value the callback
// discarded, so a container of n objects costs n^2/2 visits. The 200,000-entry `api` object
// of issue 37.6 had not been read after 15 minutes (the scan: nlohmann/json#5457).
// Here each event is O(1) or one map insertion; nothing recurses.
class BoundedDom {
 public:
  explicit BoundedDom(json& root) : root_(root) {}
  bool too_deep() const { return too_deep_; }

  bool null() { return put(nullptr), true; }
  bool boolean(bool v) { return put(v), true; }
  bool number_integer(json::number_integer_t v) { return put(v), true; }
  bool number_unsigned(json::number_unsigned_t v) { return put(v), true; }
  bool number_float(json::number_float_t v, const json::string_t&) { return put(v), true; }
  bool string(json::string_t& v) { return put(std::move(v)), true; }
  bool binary(json::binary_t& v) { return put(json::binary(std::move(v))), true; }  // never from JSON text
  bool start_object(std::size_t) { return open(json::object()); }
  bool key(json::string_t& k) { return member_ = &(*open_.back())[std::move(k)], true; }  // a repeated key: the last wins
  bool end_object() { return open_.pop_back(), true; }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() { return open_.pop_back(), true; }
  // Throws `ex` as its own type (parse_error carries the byte), as json::parse does.
  template <typename Exception>
  bool parse_error(std::size_t, const std::string&, const Exception& ex) {
    throw ex;
  }

 private:
  // Stores `v` where the next value goes (the root, the end of the open array, or the
  // member of the last key) and returns it. The pointers in open_ stay valid: only the
  // innermost open container grows, and its own slot in its parent does not move meanwhile.
  json* put(json&& v) {
    if (open_.empty()) return &(root_ = std::move(v));
    json& parent = *open_.back();
    if (parent.is_array()) {
      parent.get_ref<json::array_t&>().push_back(std::move(v));
      return &parent.get_ref<json::array_t&>().back();
    }
    return &(*member_ = std::move(v));
  }
  bool open(json&& container) {
    if (open_.size() >= static_cast<size_t>(kMaxJsonDepth)) return too_deep_ = true, false;
    open_.push_back(put(std::move(container)));
    return true;
  }
  json& root_;
  std::vector<json*> open_;  // the containers not closed yet, outermost first
  json* member_ = nullptr;   // the object member the next value goes to
  bool too_deep_ = false;
};

// What nlohmann says is wrong, without its prefix and the input it quotes:
// "[json.exception.parse_error.101] parse error at line 9, column 33: syntax error while
// parsing value - invalid string: ill-formed UTF-8 byte; last read: '..." -> "invalid
// string: ill-formed UTF-8 byte".
std::string parse_reason(std::string_view what) {
  if (const size_t dash = what.find(" - "); dash != std::string_view::npos) what.remove_prefix(dash + 3);
  else if (const size_t bracket = what.find("] "); bracket != std::string_view::npos) what.remove_prefix(bracket + 2);
  what = what.substr(0, what.find("; last read"));
  std::string out = utf8_text(what.substr(0, 120), /*controls=*/true);
  if (out.find("ill-formed UTF-8") != std::string::npos)
    out += "; cudashim builds before its UTF-8 escaping wrote such bytes of argv and paths unchanged";
  return out;
}

}  // namespace

std::optional<json> parse_bounded(std::string_view text, std::string& why, bool* too_deep_out) {
  json doc;
  BoundedDom dom(doc);
  try {
    json::sax_parse(text.begin(), text.end(), &dom);
  } catch (const json::parse_error& e) {  // e.byte: 1-based; one past the end when the text stops early
    if (text.empty())
      why = "it is empty";
    else if (e.byte > text.size())
      why = fmt::format("it stops after {} bytes, in the middle of a value", text.size());
    else
      why = fmt::format("it goes wrong at byte {} of {} ({})", e.byte, text.size(), parse_reason(e.what()));
    return std::nullopt;
  } catch (const json::exception& e) {  // a number too large for a double (1e999): out_of_range.406
    why = fmt::format("it holds a number out of range ({})", parse_reason(e.what()));
    return std::nullopt;
  }
  if (too_deep_out) *too_deep_out = dom.too_deep();
  if (dom.too_deep()) {
    why = fmt::format("it is nested deeper than {} levels", kMaxJsonDepth);
    return std::nullopt;
  }
  return doc;
}

void Fields::note(const std::string& path, const json& got, const char* expected) {
  if (!problem_.empty()) return;
  problem_ = fmt::format("{}{} is {}, expected {}", where_, path.empty() ? "the document" : path, describe(got), expected);
}

const json* Fields::Node::member(std::string_view key) const {
  if (is_null()) return nullptr;
  if (!json_->is_object()) {
    owner_->note(path_, *json_, "an object");
    return nullptr;
  }
  const auto it = json_->find(key);
  return it == json_->end() ? nullptr : &*it;
}

Fields::Node Fields::Node::operator[](std::string_view key) const {
  return Node(owner_, member(key), member_path(path_, key));
}

template <typename T>
std::optional<T> Fields::Node::get_optional(std::string_view key) const {
  const json* m = member(key);
  if (m == nullptr || m->is_null()) return std::nullopt;
  T out{};
  if (convert(*m, out)) return out;
  owner_->note(member_path(path_, key), *m, expected_name<T>());
  return std::nullopt;
}

template <typename T>
T Fields::Node::get(std::string_view key, T fallback) const {
  return get_optional<T>(key).value_or(std::move(fallback));
}

#define CUDASHIM_FIELD_TYPE(T)                                                          \
  template std::optional<T> Fields::Node::get_optional<T>(std::string_view key) const; \
  template T Fields::Node::get<T>(std::string_view key, T fallback) const;
CUDASHIM_FIELD_TYPE(uint64_t)
CUDASHIM_FIELD_TYPE(int64_t)
CUDASHIM_FIELD_TYPE(int)
CUDASHIM_FIELD_TYPE(double)
CUDASHIM_FIELD_TYPE(bool)
CUDASHIM_FIELD_TYPE(std::string)
#undef CUDASHIM_FIELD_TYPE

std::vector<Fields::Node> Fields::Node::elements(std::string_view key) const {
  std::vector<Node> out;
  const json* m = member(key);
  if (m == nullptr || m->is_null()) return out;
  const std::string path = member_path(path_, key);
  if (!m->is_array()) {
    owner_->note(path, *m, "an array");
    return out;
  }
  out.reserve(m->size());
  for (size_t i = 0; i < m->size(); ++i) out.push_back(Node(owner_, &(*m)[i], fmt::format("{}[{}]", path, i)));
  return out;
}

std::vector<std::pair<std::string, Fields::Node>> Fields::Node::members() const {
  std::vector<std::pair<std::string, Node>> out;
  if (is_null()) return out;
  if (!json_->is_object()) {
    owner_->note(path_, *json_, "an object");
    return out;
  }
  for (const auto& [name, value] : json_->items()) out.emplace_back(name, Node(owner_, &value, member_path(path_, name)));
  return out;
}

bool Fields::Node::has(std::string_view key) const {
  return json_ != nullptr && json_->is_object() && json_->contains(key);
}

const json& Fields::Node::raw() const {
  static const nlohmann::json null_value;
  return json_ == nullptr ? null_value : *json_;
}

}  // namespace cudashim::tools
