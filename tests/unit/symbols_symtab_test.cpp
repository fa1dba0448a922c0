// symbols_symtab_test.cpp: function symbols from .symtab (what dladdr cannot name).
#include <catch2/catch.hpp>
#include <unistd.h>

#include <string>

#include "symbols/symtab.h"

using namespace cudashim::symbols;

TEST_CASE("symtab: the functions of a non-stripped executable, by address", "[symbols][symtab]") {
  char exe[4096] = {};
  REQUIRE(readlink("/proc/self/exe", exe, sizeof exe - 1) > 0);
  auto syms = read_function_symbols(exe);
  REQUIRE(syms.ok());
  REQUIRE(syms.value().size() > 100);
  bool found_main = false;
  for (const auto& s : syms.value())
    if (s.name == "main") {
      found_main = true;
      const FunctionSymbol* f = function_at(syms.value(), s.value + (s.size ? s.size - 1 : 0));
      REQUIRE(f != nullptr);
      CHECK(f->name == "main");
    }
  CHECK(found_main);
  CHECK(function_at(syms.value(), 0) == nullptr);
}

TEST_CASE("symtab: bad input is an error naming the file", "[symbols][symtab]") {
  auto r = read_function_symbols("/nonexistent/file");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().find("/nonexistent/file") == 0);
}
