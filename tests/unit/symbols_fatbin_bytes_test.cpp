// Per-architecture byte accounting of fatbins: stored and uncompressed bytes per arch, and the
// bytes a given GPU uses (one entry per container: the newest runnable cubin, else the newest PTX).
#include "symbols/fatbin.h"
#include "tests/unit/symbols_fatbin_image.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

namespace {
const ArchBytes* arch(const FatbinBytes& b, const std::string& name) {
  for (const auto& a : b.archs)
    if (a.arch == name) return &a;
  return nullptr;
}
}  // namespace

TEST_CASE("fatbin bytes: per architecture, and what one GPU uses", "[fatbin]") {
  std::vector<std::uint8_t> image;
  // Container 0: sm_80, sm_86, sm_90 cubins (uncompressed) and compressed compute_90 PTX.
  append_container(image, {{2, 80, 0x11, 800}, {2, 86, 0x11, 860}, {2, 90, 0x11, 904},
                           {1, 90, 0x8011, 100, 64, 1001}});
  // Container 1: only PTX for compute_80 (compressed, CUDA 12 flag).
  append_container(image, {{1, 80, 0x2011, 40, 64, 333}});
  const Fatbin fb = parse_fatbin(image.data(), image.size());
  REQUIRE(fb.problems.empty());
  REQUIRE(fb.entries.size() == 5);

  SECTION("sm_86: the sm_86 cubin in container 0, the compute_80 PTX in container 1") {
    const FatbinBytes b = fatbin_bytes(fb, 86);
    REQUIRE(b.archs.size() == 5);
    CHECK(arch(b, "sm_80")->stored_bytes == 800);
    CHECK(arch(b, "sm_80")->used_entries == 0);  // sm_86 is newer and runs too
    CHECK(arch(b, "sm_86")->used_stored_bytes == 864);  // padded to 8
    CHECK(arch(b, "compute_90")->stored_bytes == 100);  // the compressed size
    CHECK(arch(b, "compute_90")->uncompressed_bytes == 1001);
    CHECK(arch(b, "compute_90")->used_entries == 0);
    CHECK(arch(b, "compute_80")->used_uncompressed_bytes == 333);
    CHECK(b.stored_bytes == 800 + 864 + 904 + 100 + 40);
    CHECK(b.sass_stored_bytes == 800 + 864 + 904);
    CHECK(b.ptx_stored_bytes == 140);
    CHECK(b.used_stored_bytes == 864 + 40);
  }
  SECTION("sm_90: its own cubin; compute_80 PTX for the PTX-only container") {
    const FatbinBytes b = fatbin_bytes(fb, 90);
    CHECK(arch(b, "sm_90")->used_entries == 1);
    CHECK(b.used_stored_bytes == 904 + 40);
  }
  SECTION("sm_75: nothing in container 0 runs, nor does compute_80 PTX") {
    const FatbinBytes b = fatbin_bytes(fb, 75);
    CHECK(b.used_stored_bytes == 0);
  }
  SECTION("an empty fatbin") {
    const FatbinBytes b = fatbin_bytes(Fatbin{}, 90);
    CHECK(b.archs.empty());
    CHECK(b.stored_bytes == 0);
  }
}
