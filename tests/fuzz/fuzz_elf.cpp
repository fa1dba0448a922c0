// fuzz_elf: a truncated or corrupt ELF file never crashes the symbols layer. read_elf
// either fails with an error that names the file, or returns facts that every reader
// the doctor and the shim run on a library can take: exports, versioned imports and
// their check against a provider, .symtab, a named section, the fatbins.
#include <cstdint>
#include <string>
#include <vector>

#include "symbols/cuda_library.h"
#include "symbols/elf_file.h"
#include "symbols/exports.h"
#include "symbols/fatbin.h"
#include "symbols/section_reader.h"
#include "symbols/symtab.h"
#include "symbols/version_check.h"
#include "tests/fuzz/file_image.h"

using namespace cudashim::symbols;
using cudashim::fuzz::contract_broken;

namespace {

template <class T>
void expect_named_error(const Result<T>& r, const std::string& path, const char* what) {
  if (!r.ok() && r.error().compare(0, path.size() + 2, path + ": ") != 0)
    contract_broken(std::string(what) + " error does not name the file: " + r.error());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static cudashim::fuzz::FileImage file("lib.so");
  const std::string& path = file.write(data, size);
  const Result<ElfFacts> facts = read_elf(path);
  expect_named_error(facts, path, "read_elf");

  const Result<std::vector<FunctionSymbol>> funcs = read_function_symbols(path);
  expect_named_error(funcs, path, "read_function_symbols");
  if (funcs.ok() && !funcs.value().empty()) (void)function_at(funcs.value(), funcs.value().front().value);
  const Result<std::vector<std::uint8_t>> sec = read_section(path, ".nv_fatbin", 1u << 20);
  expect_named_error(sec, path, "read_section");
  if (!facts.ok()) return 0;

  const ElfFacts& f = facts.value();
  (void)defined_dynamic_symbols(f);
  (void)undefined_versioned(f);
  for (const DynamicSymbol& s : f.dynamic_symbols) {
    (void)defines(f, s.name, s.version);
    if (&s - f.dynamic_symbols.data() > 64) break;
  }
  if (!f.soname.empty()) (void)classify_cuda_library(f.soname);
  // The file as the provider of every version it needs: walks VERNEED against VERDEF.
  std::vector<Provider> providers;
  for (const VersionNeed& n : f.version_needs) providers.push_back(Provider{n.file, Resolution{}, &f});
  (void)check_versions(f, providers);

  const Result<Fatbin> fb = read_fatbin(path, f);
  expect_named_error(fb, path, "read_fatbin");
  if (fb.ok()) (void)coverage_for(fb.value(), 90);
  return 0;
}
