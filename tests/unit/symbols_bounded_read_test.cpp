// symbols/bounded_read.h: every file the shim reads is a regular file, opened without blocking
// and read up to a limit. Before it, CUDASHIM_POLICY=<a FIFO> hung every preloaded process at
// load and CUDASHIM_POLICY=/dev/zero read about 1 GB until bad_alloc.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <string>

#include "symbols/bounded_read.h"
#include "tests/unit/symbols_test_support.h"

using namespace cudashim::symbols;
using namespace symbols_test;

TEST_CASE("read_regular reads a regular file whole, up to its limit", "[symbols][bounded_read]") {
  TempDir dir;
  const fs::path f = dir / "policy.toml";
  write_text(f, "[memory]\ncap = \"8GiB\"\n");
  SECTION("within the limit") {
    auto r = read_regular(f.string(), 1024);
    REQUIRE(r.ok());
    CHECK(r.value() == "[memory]\ncap = \"8GiB\"\n");
  }
  SECTION("exactly at the limit") {
    auto r = read_regular(f.string(), 22);
    REQUIRE(r.ok());
    CHECK(r.value().size() == 22);
  }
  SECTION("one byte over the limit: refused, saying the limit") {
    auto r = read_regular(f.string(), 21);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == f.string() + ": larger than 21 bytes, the limit for this file");
  }
  SECTION("or cut there, when the caller asks for a prefix") {
    bool truncated = false;
    auto r = read_regular(f.string(), 8, &truncated);
    REQUIRE(r.ok());
    CHECK(r.value() == "[memory]");
    CHECK(truncated);
  }
  SECTION("an empty file is empty text") {
    write_text(dir / "empty", "");
    auto r = read_regular((dir / "empty").string(), 10);
    REQUIRE(r.ok());
    CHECK(r.value().empty());
  }
}

TEST_CASE("read_regular refuses what is not a regular file, at once", "[symbols][bounded_read]") {
  TempDir dir;
  const auto t0 = std::chrono::steady_clock::now();
  SECTION("a FIFO with no writer (open(2) alone would block for good)") {
    const fs::path fifo = dir / "fifo";
    REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
    auto r = read_regular(fifo.string(), 1u << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == fifo.string() + ": not a regular file (a FIFO)");
    char buf[16];
    CHECK(read_regular_into(fifo.c_str(), buf, sizeof buf) == 0);
    CHECK(buf[0] == '\0');
  }
  SECTION("/dev/zero (never ends)") {
    int err = -1;
    auto r = read_regular("/dev/zero", 1u << 20, nullptr, &err);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == "/dev/zero: not a regular file (a character device)");
    CHECK(err == 0);  // the file was refused, not missing
  }
  SECTION("a directory") {
    auto r = read_regular(dir.path.string(), 1u << 20);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error() == dir.path.string() + ": not a regular file (a directory)");
  }
  SECTION("a missing file: ENOENT, for callers to whom absence is no problem") {
    int err = 0;
    auto r = read_regular((dir / "nope").string(), 10, nullptr, &err);
    REQUIRE_FALSE(r.ok());
    CHECK(err == ENOENT);
    CHECK(r.error() == (dir / "nope").string() + ": cannot be opened: No such file or directory");
  }
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
}

TEST_CASE("/proc files report size 0: they are measured by reading them", "[symbols][bounded_read]") {
  struct stat st {};
  REQUIRE(stat("/proc/self/status", &st) == 0);
  REQUIRE(st.st_size == 0);
  auto whole = read_regular("/proc/self/status", 1u << 20);
  REQUIRE(whole.ok());
  CHECK(whole.value().find("Pid:") != std::string::npos);
  auto small = read_regular("/proc/self/status", 16);  // more than 16 bytes: over the limit
  REQUIRE_FALSE(small.ok());
  CHECK(small.error() == "/proc/self/status: larger than 16 bytes, the limit for this file");
  bool truncated = false;
  auto prefix = read_regular("/proc/self/cmdline", 4, &truncated);
  REQUIRE(prefix.ok());
  CHECK(prefix.value().size() == 4);
  CHECK(truncated);
}

TEST_CASE("open_regular opens for reading without blocking or a controlling terminal", "[symbols][bounded_read]") {
  TempDir dir;
  write_text(dir / "f", "x");
  const OpenedFile f = open_regular((dir / "f").c_str());
  REQUIRE(f.fd >= 0);
  const int flags = fcntl(f.fd, F_GETFL);
  CHECK((flags & O_ACCMODE) == O_RDONLY);
  CHECK((flags & O_NONBLOCK) != 0);
  CHECK((fcntl(f.fd, F_GETFD) & FD_CLOEXEC) != 0);
  CHECK(f.size == 1);
  close(f.fd);
  CHECK(size_text(64u << 10) == "64 KiB");
  CHECK(size_text(1u << 20) == "1 MiB");
  CHECK(size_text(100) == "100 bytes");
}
