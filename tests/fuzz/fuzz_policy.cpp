// fuzz_policy: hostile policy files never crash the loader, and every error names
// the file with a line and a column ("<file>:<line>:<col>: <what>"), which is what
// the shim prints before it stops the job with exit 78.
//
// Each input is applied twice, as the administrator's file and then as the user's
// file on top of it, so that a `policy.locked = true` written by the fuzzer also
// drives the "may only tighten" checks of the user pass.
#include <cctype>
#include <cstdint>
#include <string>

#include "policy/settings_load.h"
#include "tests/fuzz/file_image.h"

namespace {

using cudashim::fuzz::contract_broken;

const char* no_env(const char*) { return nullptr; }

// "<path>:<digits>:<digits>: <non-empty text>"
bool names_line_and_column(const std::string& e, const std::string& path) {
  if (e.compare(0, path.size() + 1, path + ":") != 0) return false;
  size_t i = path.size() + 1;
  for (int field = 0; field < 2; ++field) {
    const size_t start = i;
    while (i < e.size() && std::isdigit(static_cast<unsigned char>(e[i]))) ++i;
    if (i == start || i >= e.size() || e[i] != ':') return false;
    ++i;
  }
  return i + 1 < e.size() && e[i] == ' ';
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cudashim::fuzz::FileImage file("policy.toml");
  const std::string& path = file.write(data, size);
  cudashim::policy::LoadResult r = cudashim::policy::load_policy(no_env, "");
  cudashim::policy::apply_file(r, path, /*admin=*/true);
  cudashim::policy::apply_file(r, path, /*admin=*/false);
  for (const std::string& e : r.errors)
    if (!names_line_and_column(e, path)) contract_broken("policy error without <file>:<line>:<col>: " + e);
  // What the shim does next with an accepted policy must hold up as well.
  (void)r.stop();
  (void)cudashim::setting_word(r.policy.settings.log_level);
  (void)r.policy.settings.mem_cap.resolve(80ull << 30);
  (void)cudashim::setting_word(r.policy.settings.managed);
  (void)cudashim::policy::describe(r.policy);
  return 0;
}
