// options_test.cpp: the CUDASHIM_* table: defaults, good values, garbage.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "policy/options.h"

using namespace cudashim::policy;

namespace {
std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}
}  // namespace

TEST_CASE("options come from the table with documented defaults", "[options]") {
  g_env.clear();
  std::vector<std::string> errors;
  const Options o = parse_options(fake_getenv, errors);
  CHECK(errors.empty());
  CHECK(o.OUT == ".");
  CHECK(o.report());
  CHECK_FALSE(o.disable());
  CHECK(o.log_level() == 1);
}

TEST_CASE("good values are taken, spelled any usual way", "[options]") {
  g_env = {{"CUDASHIM_DISABLE", "yes"}, {"CUDASHIM_REPORT", "off"}, {"CUDASHIM_LOG_LEVEL", "debug"},
           {"CUDASHIM_OUT", "/tmp/x"}};
  std::vector<std::string> errors;
  const Options o = parse_options(fake_getenv, errors);
  CHECK(errors.empty());
  CHECK(o.disable());
  CHECK_FALSE(o.report());
  CHECK(o.log_level() == 3);
  CHECK(o.OUT == "/tmp/x");
}

TEST_CASE("garbage gives the default and a message naming variable, value and fix", "[options]") {
  g_env = {{"CUDASHIM_DISABLE", "maybe"}, {"CUDASHIM_LOG_LEVEL", "loud"}, {"CUDASHIM_OUT", ""}};
  std::vector<std::string> errors;
  const Options o = parse_options(fake_getenv, errors);
  REQUIRE(errors.size() == 3);
  CHECK(errors[0] == "CUDASHIM_DISABLE='maybe' is not a boolean (use 1 or 0); using the default '0'");
  CHECK(errors[1].find("CUDASHIM_OUT='' is empty") == 0);
  CHECK(errors[2].find("CUDASHIM_LOG_LEVEL='loud' is not a log level") == 0);
  CHECK_FALSE(o.disable());
  CHECK(o.OUT == ".");
  CHECK(o.log_level() == 1);
}

TEST_CASE("the Markdown table lists every option", "[options]") {
  const std::string md = options_markdown();
  for (int i = 0; i < kOptionCount; ++i) CHECK(md.find(std::string("`CUDASHIM_") + kOptionRows[i].name + "`") != std::string::npos);
}
