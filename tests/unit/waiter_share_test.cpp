// waiter_share_test.cpp: a waiter's site is a finding only with its share of the read-back's
// samples (policy::waiter_is_finding, shim/wait_sampler.h).
#include <catch2/catch.hpp>

#include "policy/sync_rules.h"
#include "recorder/callsites.h"

namespace rec = cudashim::recorder;
namespace pol = cudashim::policy;
using cudashim::FindingId;
using cudashim::HookId;

namespace {

// `n` samples at `s` for its read-back, each in a step of its own, counted as the sampler counts them.
void sample(rec::CallSite* s, int n) {
  for (int i = 0; i < n; ++i) {
    s->reader->waiter_visits.fetch_add(1, std::memory_order_relaxed);  // each sample below starts a visit
    rec::site_hit(s, 0, 4, static_cast<uint64_t>(i), 1000 + static_cast<uint64_t>(i));
  }
}

}  // namespace

TEST_CASE("a waiter's line is a finding with a fifth of its read-back's samples or more", "[policy][sampler]") {
  rec::sites_reset();
  static int reader_ra, other_ra;
  rec::CallSite* reader = rec::site_for(HookId::cuMemcpyDtoHAsync_v2, &reader_ra, rec::PyLocation{});
  REQUIRE(reader != nullptr);
  static int code_a, code_b, code_c;
  rec::PyFrameText frame;
  rec::CallSite* wait = rec::sampled_site_for(*reader, rec::PyLocation{&code_a, nullptr, 62}, &frame, 1);
  rec::CallSite* dispatch = rec::sampled_site_for(*reader, rec::PyLocation{&code_b, nullptr, 60}, &frame, 1);
  REQUIRE(wait != nullptr);
  REQUIRE(dispatch != nullptr);
  REQUIRE(wait != dispatch);
  CHECK(wait->sampled);
  CHECK(wait->reader == reader);

  SECTION("the line the main thread waits at holds most samples; the hand-off's line is no finding") {
    sample(wait, 90);
    sample(dispatch, 10);
    CHECK(pol::waiter_is_finding(*wait));
    CHECK(pol::classify_site(*wait) == FindingId::scalar_readback);
    CHECK_FALSE(pol::waiter_is_finding(*dispatch));
    CHECK(pol::classify_site(*dispatch) == FindingId::none);
  }
  SECTION("two lines that both wait for read-backs through one XLA site are both findings") {
    sample(wait, 50);
    sample(dispatch, 40);
    CHECK(pol::classify_site(*wait) == FindingId::scalar_readback);
    CHECK(pol::classify_site(*dispatch) == FindingId::scalar_readback);
  }
  SECTION("exactly a fifth is enough; just under is not") {
    sample(wait, 80);
    sample(dispatch, 20);
    CHECK(pol::waiter_is_finding(*dispatch));
    sample(wait, 1);
    CHECK_FALSE(pol::waiter_is_finding(*dispatch));
  }
  SECTION("another read-back's samples do not dilute this one's") {
    rec::CallSite* other = rec::site_for(HookId::cuMemcpyDtoHAsync_v2, &other_ra, rec::PyLocation{});
    REQUIRE(other != nullptr);
    rec::CallSite* elsewhere = rec::sampled_site_for(*other, rec::PyLocation{&code_c, nullptr, 7}, &frame, 1);
    REQUIRE(elsewhere != nullptr);
    sample(elsewhere, 1000);
    sample(dispatch, 10);
    CHECK(pol::waiter_is_finding(*dispatch));
  }
  SECTION("a compile's burst, many samples in one visit, does not dilute the loop's line") {
    for (int i = 0; i < 500; ++i) rec::site_hit(dispatch, 0, 4, 7, 1000 + static_cast<uint64_t>(i));  // one step
    dispatch->reader->waiter_visits.fetch_add(1, std::memory_order_relaxed);
    sample(wait, 20);
    CHECK(dispatch->hits.load() == 500);
    CHECK(pol::waiter_is_finding(*wait));
  }
  SECTION("a site the hooks count is never judged by the share") {
    CHECK_FALSE(pol::waiter_is_finding(*reader));
  }
  rec::sites_reset();
}
