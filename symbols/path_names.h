// path_names.h: the file and folder parts of a path, as text (no file system access).
#pragma once
#include <string>

namespace cudashim::symbols {

// "/a/b/libx.so" -> "libx.so"; a name without a slash is itself.
inline std::string base_name(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}
// "/a/b/libx.so" -> "/a/b"; a name without a slash is in ".".
inline std::string dir_name(const std::string& p) {
  const size_t s = p.rfind('/');
  return s == std::string::npos ? "." : p.substr(0, s);
}

}  // namespace cudashim::symbols
