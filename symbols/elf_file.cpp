// read_elf(): assembles ElfFacts from the readers in elf_readers.h.
#include "symbols/elf_file.h"

#include <exception>
#include <new>

#include "symbols/elf_readers.h"

namespace cudashim::symbols {
namespace {

// The identity of the file: class, machine, type.
void read_identity(const detail::ElfHandle& h, ElfFacts& facts) {
  facts.elf_class = gelf_getclass(h.elf()) == ELFCLASS32 ? 32 : 64;
  facts.machine = h.ehdr().e_machine;
  facts.type = h.ehdr().e_type;
}

// Every part after the handle is open; the first failure wins.
Result<ElfFacts> read_parts(const detail::ElfHandle& h) {
  ElfFacts facts;
  facts.path = h.path();
  read_identity(h, facts);
  auto sections = detail::read_sections(h);
  if (!sections.ok()) return sections.to_error();
  facts.sections = std::move(sections.value());
  auto interp = detail::read_interp(h);
  if (!interp.ok()) return interp.to_error();
  facts.interp = std::move(interp.value());
  auto dynamic = detail::read_dynamic(h);
  if (!dynamic.ok()) return dynamic.to_error();
  facts.soname = std::move(dynamic.value().soname);
  facts.needed = std::move(dynamic.value().needed);
  facts.rpath = std::move(dynamic.value().rpath);
  facts.runpath = std::move(dynamic.value().runpath);
  auto defs = detail::read_version_definitions(h);
  if (!defs.ok()) return defs.to_error();
  facts.version_definitions = std::move(defs.value());
  auto needs = detail::read_version_needs(h);
  if (!needs.ok()) return needs.to_error();
  facts.version_needs = std::move(needs.value());
  auto symbols = detail::read_dynamic_symbols(h, facts.version_definitions, facts.version_needs);
  if (!symbols.ok()) return symbols.to_error();
  facts.dynamic_symbols = std::move(symbols.value());
  return facts;
}

}  // namespace

Result<ElfFacts> read_elf(const std::string& path) {
  try {
    auto handle = detail::ElfHandle::open(path);
    if (!handle.ok()) return handle.to_error();
    return read_parts(handle.value());
  } catch (const std::bad_alloc&) {
    return make_error(path, "out of memory while reading");
  } catch (const std::exception& e) {
    return make_error(path, std::string("unexpected failure: ") + e.what());
  }
}

}  // namespace cudashim::symbols
