// recorder_test.cpp: the recorder's API driven directly, with no preloading.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <thread>
#include <vector>

#include "recorder/events.h"
#include "recorder/no_cuda_record.h"
#include "recorder/recorder.h"
#include "report/report.h"
#include "catalog/hooks.h"

using namespace cudashim;
using namespace cudashim::recorder;

namespace {
uint64_t calls_of(HookId id) {
  static CounterTotals t;
  sum_slots(t);
  return t.calls[static_cast<size_t>(id)];
}
}  // namespace

TEST_CASE("hook names are matched exactly, never by prefix or base name", "[catalog]") {
  SECTION("every row finds itself") {
    for (size_t i = 0; i < kHookCount; ++i) REQUIRE(find_hook(kHooks[i].name) == static_cast<HookId>(i));
  }
  SECTION("a base name is not its versioned ABI") {
    CHECK(find_hook("cuMemAlloc") == HookId::kCount);
    CHECK(find_hook("cuMemAlloc_v2") == HookId::cuMemAlloc_v2);
    CHECK(find_hook("cuStreamSynchronize_ptsz") == HookId::cuStreamSynchronize_ptsz);
    CHECK(find_hook("cuStreamSynchronize") == HookId::cuStreamSynchronize);
  }
  SECTION("\"cu\" prefixes of other families are not ours (a peer recursed on cudnn*)") {
    CHECK(find_hook("cu") == HookId::kCount);
    CHECK(find_hook("cudnnCreate") == HookId::kCount);
    CHECK(find_hook("cuGetExportTable") == HookId::kCount);  // passed through untouched
    CHECK(find_hook("cuMemAlloc_v2x") == HookId::kCount);
    CHECK(find_hook("") == HookId::kCount);
  }
}

TEST_CASE("CallScope counts calls, errors and time per exact ABI", "[slots]") {
  reset_all();
  {
    CallScope s(HookId::cuStreamSynchronize);
    s.finish(0, 1500);
  }
  {
    CallScope s(HookId::cuStreamSynchronize);
    s.finish(700, 500);  // CUDA_ERROR_ILLEGAL_ADDRESS
  }
  static CounterTotals t;
  sum_slots(t);
  const size_t i = static_cast<size_t>(HookId::cuStreamSynchronize);
  CHECK(t.calls[i] == 2);
  CHECK(t.errors[i] == 1);
  CHECK(t.last_error[i] == 700);
  CHECK(t.time_ns[i] == 2000);
  CHECK(t.blocked_outer_ns == 2000);
  CHECK(t.calls[static_cast<size_t>(HookId::cuStreamSynchronize_ptsz)] == 0);
}

TEST_CASE("nested hooks (runtime over driver) count blocked time once", "[slots]") {
  reset_all();
  {
    CallScope outer(HookId::cudaDeviceSynchronize);
    {
      CallScope inner(HookId::cuCtxSynchronize);
      REQUIRE_FALSE(inner.outermost());
      inner.finish(0, 900);
    }
    REQUIRE(outer.outermost());
    outer.finish(0, 1000);
  }
  static CounterTotals t;
  sum_slots(t);
  CHECK(t.calls[static_cast<size_t>(HookId::cudaDeviceSynchronize)] == 1);
  CHECK(t.calls[static_cast<size_t>(HookId::cuCtxSynchronize)] == 1);
  CHECK(t.time_ns[static_cast<size_t>(HookId::cuCtxSynchronize)] == 900);
  CHECK(t.blocked_outer_ns == 1000);  // not 1900
}

TEST_CASE("counts stay exact with many threads (no lock, no lost update)", "[slots][threads]") {
  reset_all();
  constexpr int kThreads = 32, kCalls = 100000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([] {
      for (int i = 0; i < kCalls; ++i) {
        CallScope s(HookId::cuLaunchKernel);
        s.finish(0, 0);
      }
    });
  for (auto& t : ts) t.join();
  CHECK(calls_of(HookId::cuLaunchKernel) == uint64_t{kThreads} * kCalls);
}

TEST_CASE("the ledger keeps live and peak bytes per device and kind", "[ledger]") {
  reset_all();
  DeviceStats d[kMaxDevices + 1];
  SECTION("alloc, free, peak") {
    REQUIRE(ledger_insert(MemKind::device, 0x1000, 100, 0));
    REQUIRE(ledger_insert(MemKind::device, 0x2000, 50, 0));
    CHECK(ledger_erase(MemKind::device, 0x1000) == 100);
    REQUIRE(ledger_insert(MemKind::async, 0x3000, 10, 0));
    REQUIRE(ledger_devices(d, kMaxDevices + 1) == 1);
    CHECK(d[0].device == 0);
    CHECK(d[0].live_bytes == 60);
    CHECK(d[0].peak_bytes == 150);
    CHECK(d[0].kinds[static_cast<int>(MemKind::device)].allocs == 2);
    CHECK(d[0].kinds[static_cast<int>(MemKind::device)].frees == 1);
    CHECK(d[0].kinds[static_cast<int>(MemKind::async)].live_bytes == 10);
  }
  SECTION("cuMemFree frees stream-ordered and managed blocks too (one device address space)") {
    REQUIRE(ledger_insert(MemKind::async, 0x5000, 64, 1));
    REQUIRE(ledger_insert(MemKind::managed, 0x6000, 32, 1));
    CHECK(ledger_erase(MemKind::device, 0x5000) == 64);
    CHECK(ledger_erase(MemKind::device, 0x6000) == 32);
    REQUIRE(ledger_devices(d, kMaxDevices + 1) == 1);
    CHECK(d[0].device == 1);
    CHECK(d[0].live_bytes == 0);
  }
  SECTION("host memory and device memory at the same number do not collide") {
    REQUIRE(ledger_insert(MemKind::device, 0x7000, 8, 0));
    REQUIRE(ledger_insert(MemKind::host_pinned, 0x7000, 16, kHostDevice));
    CHECK(ledger_erase(MemKind::host_pinned, 0x7000) == 16);
    CHECK(ledger_erase(MemKind::device, 0x7000) == 8);
  }
  SECTION("managed and host memory are not device-resident bytes") {
    REQUIRE(ledger_insert(MemKind::managed, 0x8000, 1000, 0));
    REQUIRE(ledger_devices(d, kMaxDevices + 1) == 1);
    CHECK(d[0].live_bytes == 0);
    CHECK(d[0].kinds[static_cast<int>(MemKind::managed)].live_bytes == 1000);
  }
  SECTION("a free of an unknown address changes nothing and is counted") {
    CHECK(ledger_erase(MemKind::device, 0xdead000) == 0);
    CHECK(ledger_unknown_frees() == 1);
  }
  SECTION("IPC mappings are another process's memory: no bytes, no double count") {
    record_alloc(MemKind::ipc, 0x9000, 4096, 0);
    REQUIRE(ledger_devices(d, kMaxDevices + 1) == 1);
    CHECK(d[0].live_bytes == 0);
    CHECK(d[0].kinds[static_cast<int>(MemKind::ipc)].live_count == 1);
  }
}

TEST_CASE("the ledger is exact under concurrent alloc/free", "[ledger][threads]") {
  reset_all();
  constexpr int kThreads = 8, kOps = 50000;
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([t] {
      for (int i = 0; i < kOps; ++i) {
        const uint64_t addr = (uint64_t(t + 1) << 32) | (uint64_t(i) << 8);
        ledger_insert(MemKind::device, addr, 256, 0);
        ledger_erase(MemKind::device, addr);
      }
    });
  for (auto& t : ts) t.join();
  DeviceStats d[kMaxDevices + 1];
  REQUIRE(ledger_devices(d, kMaxDevices + 1) == 1);
  CHECK(d[0].live_bytes == 0);
  CHECK(d[0].kinds[0].allocs == uint64_t{kThreads} * kOps);
  CHECK(d[0].kinds[0].frees == uint64_t{kThreads} * kOps);
  CHECK(d[0].peak_bytes <= uint64_t{kThreads} * 256);
  CHECK(d[0].peak_bytes >= 256);
  CHECK(ledger_overflows() == 0);
}

TEST_CASE("the report is valid JSON with the documented top-level fields", "[report]") {
  reset_all();
  {
    CallScope s(HookId::cuMemcpyHtoD_v2);
    s.add_bytes(4096);
    s.finish(0, 1234);
  }
  ledger_insert(MemKind::device, 0xa000, 1 << 20, 0);
  ProcessInfo info;
  capture_process_info(info);
  const auto doc = nlohmann::json::parse(report::render_report({info}));
  CHECK(doc["schema"] == "cudashim.report/1");
  CHECK(doc["process"]["pid"] == info.pid);
  CHECK(doc["api"]["cuMemcpyHtoD_v2"]["calls"] == 1);
  CHECK(doc["api"]["cuMemcpyHtoD_v2"]["bytes"] == 4096);
  CHECK(doc["api"]["cuMemcpyHtoD_v2"]["blocked_ns"] == 1234);
  CHECK(doc["api"]["cuMemcpyHtoD_v2"]["family"] == "copy");
  CHECK(doc["memory"]["devices"][0]["live_bytes"] == (1 << 20));
  CHECK(doc["memory"]["devices"][0]["peak_bytes"] == (1 << 20));
  CHECK(doc["interposition"].contains("procaddr_substituted"));
  CHECK(doc["driver"]["libcuda_loaded"].is_null());
  CHECK(!doc["api"].contains("cuLaunchKernel"));  // only APIs that were called
}

TEST_CASE("a process that made no CUDA call is named by argv[0], in plain bytes", "[recorder]") {
  char name[64];
  cudashim::recorder::no_cuda_name("/usr/bin/python3", "/usr/bin/python3.11", name, sizeof name);
  CHECK(std::string(name) == "python3");
  cudashim::recorder::no_cuda_name("-bash", "/bin/bash", name, sizeof name);  // a login shell
  CHECK(std::string(name) == "bash");
  cudashim::recorder::no_cuda_name("", "/opt/x/mpirun", name, sizeof name);  // no argv: the executable
  CHECK(std::string(name) == "mpirun");
  cudashim::recorder::no_cuda_name("we ird\t\nname", nullptr, name, sizeof name);  // no tab or newline in a line
  CHECK(std::string(name) == "we_ird__name");
  cudashim::recorder::no_cuda_name(nullptr, nullptr, name, sizeof name);
  CHECK(std::string(name) == "?");
  cudashim::recorder::no_cuda_name(std::string(100, 'a').c_str(), nullptr, name, sizeof name);
  CHECK(std::string(name).size() == 48);
  char tiny[4];
  cudashim::recorder::no_cuda_name("python3", nullptr, tiny, sizeof tiny);
  CHECK(std::string(tiny) == "pyt");
}
