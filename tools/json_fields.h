// json_fields.h: JSON from a hostile file, for `cudashim report`: parsed with a depth
// limit, then read only through typed accessors that never throw.
//
// Every file `cudashim report` reads may be cut, edited or made up. nlohmann's own
// accessors throw on the first field of another type (value("pid", 0) on "pid": "x"), and
// its dump and copy recurse once per nesting level (a 100,000-deep array overflows the
// stack). So a document is parsed by parse_bounded, and a reader takes its fields through
// Fields: each read names its path in the document ("findings[2].sites[0].count"), a field
// that is missing or null gives the fallback, and a field of another type gives the
// fallback too and keeps the first such problem. A reader checks problem() once, after it
// has read everything; no field can slip through unchecked, one at a time.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudashim::tools {

// The deepest nesting a document or stream line may have. The shim writes at most 7
// levels (a report's findings[].sites[].frames[] object).
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` as one JSON value nested at most kMaxJsonDepth levels. Returns nullopt
// and sets `why` when it is not JSON ("it breaks off at byte 57 of 57") or too deep ("it
// is nested deeper than 64 levels", and *too_deep set when given).
std::optional<nlohmann::json> parse_bounded(std::string_view text, std::string& why, bool* too_deep = nullptr);

class Fields {
 public:
  // A value inside the document, with its path. A Node of a missing member is null.
  class Node {
   public:
    // The member `key` of this object: a null Node when it is missing; when this is not an
    // object (nor null), the problem, and a null Node.
    Node operator[](std::string_view key) const;
    // The member `key` read as T (uint64_t, int64_t, int, double, bool, std::string):
    // `fallback` when it is missing or null; for another type (a string for a number, a
    // negative number for an unsigned one, 1.5 for an integer), the problem and `fallback`.
    template <typename T>
    T get(std::string_view key, T fallback = T{}) const;
    // The same, nullopt when it is missing or null.
    template <typename T>
    std::optional<T> get_optional(std::string_view key) const;
    // The elements of the array member `key`: none when it is missing or null; when it is
    // not an array, the problem and none.
    std::vector<Node> elements(std::string_view key) const;
    // The members of this object, sorted by name (nlohmann's order); none when this is null;
    // when this is not an object, the problem and none.
    std::vector<std::pair<std::string, Node>> members() const;
    // True when the member `key` exists (null included); false for a non-object.
    bool has(std::string_view key) const;
    bool is_null() const { return json_ == nullptr || json_->is_null(); }
    // The value as parsed (null for a missing member), for what is copied as it is.
    const nlohmann::json& raw() const;
    const std::string& path() const { return path_; }

   private:
    friend class Fields;
    Node(Fields* owner, const nlohmann::json* json, std::string path)
        : owner_(owner), json_(json), path_(std::move(path)) {}
    // The member `key` when this is an object, else nullptr (a problem unless null).
    const nlohmann::json* member(std::string_view key) const;
    Fields* owner_;
    const nlohmann::json* json_;  // nullptr: missing
    std::string path_;
  };

  // Reads `doc`; `where` prefixes every path in a problem ("line 7: "). pre: `doc` outlives
  // this and its Nodes.
  explicit Fields(const nlohmann::json& doc, std::string where = "") : doc_(doc), where_(std::move(where)) {}
  Node root() { return Node(this, &doc_, ""); }
  // The first field of another type than expected ("process.pid is a string, expected an
  // integer"), "" when every read matched.
  const std::string& problem() const { return problem_; }
  bool ok() const { return problem_.empty(); }

 private:
  void note(const std::string& path, const nlohmann::json& got, const char* expected);
  const nlohmann::json& doc_;
  std::string where_;
  std::string problem_;
};

}  // namespace cudashim::tools
