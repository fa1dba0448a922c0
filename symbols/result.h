// Result<T>: a small expected-like value-or-error type for the symbols layer.
// The public API of this layer never throws; it returns Result<T> instead.
#pragma once

#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

namespace cudashim::symbols {

// A failure: a human message naming the file and what is wrong with it,
// e.g. "libfoo.so: not an ELF file (bad magic)".
struct Error {
  std::string message;
};

// Builds the conventional "<file>: <what>" error.
inline Error make_error(const std::string& file, const std::string& what) {
  return Error{file + ": " + what};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}            // NOLINT: implicit on purpose
  Result(Error error) : error_(std::move(error.message)) {}  // NOLINT: implicit on purpose

  // True when a value is held.
  bool ok() const noexcept { return value_.has_value(); }
  explicit operator bool() const noexcept { return ok(); }

  // The value. Precondition: ok(); calling it on an error is a bug and aborts.
  const T& value() const& { check(); return *value_; }
  T& value() & { check(); return *value_; }
  T&& value() && { check(); return std::move(*value_); }

  // The error message; empty when ok().
  const std::string& error() const noexcept { return error_; }

  // The error as an Error, to pass a failure up as another Result<U>.
  Error to_error() const { return Error{error_}; }

 private:
  void check() const {
    if (!value_) std::abort();
  }

  std::optional<T> value_;
  std::string error_;
};

}  // namespace cudashim::symbols
