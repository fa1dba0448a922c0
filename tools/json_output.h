// json_output.h: the JSON the command line prints (`report --json`, `doctor --json`),
// valid UTF-8 whatever bytes its strings hold. nlohmann's dump() throws (type_error 316)
// on the first string that is not UTF-8, and the CLI's strings come from outside: file
// names, symbol names, paths inside reports. Each string and key is written as the shim
// writes its own (recorder/utf8.h: a byte outside well-formed UTF-8 as the text \xNN), so
// `cudashim report --json` and the reports it merges say the same.
#pragma once
#include <nlohmann/json.hpp>

#include <string>

#include "recorder/utf8.h"

namespace cudashim::tools {
namespace json_output_detail {

// True when a string or key anywhere in `j` is not valid UTF-8. Recursive: the CLI's
// documents are shallow or were parsed with tools/json_fields.h's depth limit.
inline bool needs_repair(const nlohmann::json& j) {
  if (j.is_string()) return !is_utf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    for (const auto& e : j)
      if (needs_repair(e)) return true;
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items())
      if (!is_utf8(k) || needs_repair(v)) return true;
  }
  return false;
}

inline nlohmann::json repaired(const nlohmann::json& j) {
  if (j.is_string()) return utf8_text(j.get_ref<const std::string&>());
  if (j.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : j) out.push_back(repaired(e));
    return out;
  }
  if (j.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [k, v] : j.items()) out[utf8_text(k)] = repaired(v);
    return out;
  }
  return j;
}

}  // namespace json_output_detail

// `doc` as JSON text indented by `indent` (nlohmann's dump), every string valid UTF-8.
inline std::string dump_utf8(const nlohmann::json& doc, int indent) {
  if (!json_output_detail::needs_repair(doc)) return doc.dump(indent);
  return json_output_detail::repaired(doc).dump(indent);
}

}  // namespace cudashim::tools
