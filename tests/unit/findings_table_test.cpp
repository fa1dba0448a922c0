// findings_table_test.cpp: the one findings table (catalog/findings.def): every id and
// every old id finds its row, the old ids of saved reports keep working, and each id
// names its domain.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "catalog/findings.h"

using namespace cudashim;

TEST_CASE("a finding is found by its id and by the id reports carried before", "[catalog]") {
  SECTION("every id and every alias finds its own row") {
    for (const FindingInfo& f : kFindings) {
      REQUIRE(find_finding(f.name) == f.id);
      if (*f.alias) REQUIRE(find_finding(f.alias) == f.id);
    }
  }
  SECTION("the library, driver and doctor ids of older reports read as today's") {
    CHECK(find_finding("driver-too-old") == FindingId::driver_too_old);
    CHECK(std::string(finding_info(find_finding("driver-too-old")).name) == "driver.too-old");
    CHECK(std::string(finding_info(find_finding("fatbin-no-sass")).name) == "fatbin.no-sass");
    CHECK(std::string(finding_info(find_finding("versioned-symbol-shortfall")).name) ==
          "library.versioned-symbol-shortfall");
    CHECK(std::string(finding_info(find_finding("env-jit-cache-disabled")).name) == "env.jit-cache-disabled");
  }
  SECTION("the runtime ids did not change and have no alias") {
    CHECK(find_finding("sync.scalar-readback") == FindingId::scalar_readback);
    CHECK(*finding_info(FindingId::scalar_readback).alias == '\0');
    CHECK(std::string(finding_info(FindingId::torch_fragmentation).name) == "alloc.fragmentation");
  }
  SECTION("an unknown, empty or partial id is no finding") {
    CHECK(find_finding("") == FindingId::none);
    CHECK(find_finding("driver") == FindingId::none);
    CHECK(find_finding("driver.too") == FindingId::none);
    CHECK(find_finding("DRIVER-TOO-OLD") == FindingId::none);
  }
}

TEST_CASE("each id is its domain, a dot and a name; no id is listed twice", "[catalog]") {
  std::set<std::string> names;
  for (const FindingInfo& f : kFindings) {
    const std::string id = f.name, domain = domain_name(f.domain);
    INFO(id);
    CHECK(id.rfind(domain + ".", 0) == 0);
    CHECK(names.insert(id).second);
    CHECK(*f.title);
    CHECK(*f.fix);
  }
  CHECK(names.size() == kFindingCount);
}
