// hook_overhead: the cost cudashim adds to one intercepted call, measured side by side with the
// direct call in one run, through the test-double driver.
//
// Run under the shim (bench/run_hook_overhead.sh does this):
//   LD_PRELOAD=<build>/lib/libcudashim.so LD_LIBRARY_PATH=<build>/fakecuda bench_hook_overhead [options]
// The program is not linked to libcuda. It reaches the driver as libcudart does: dlopen("libcuda.so.1",
// RTLD_LOCAL), dlsym cuGetProcAddress_v2, everything else through it; under the shim those are the
// shim's wrappers. The direct baseline is the double's own function for the same exact ABI, from
// fakecuda_entry_point() (it bypasses every interposer).
//
// For each operation, R rounds; a round times a batch of N calls through the wrapper and a batch of N
// through the direct pointer (A B, then B A in the next round), each batch between two steady-clock
// reads. Per-call ns = batch time / N; the table shows medians over rounds, and added = median(shim) -
// median(direct). Both batches run the same machine code (one noinline function per operation, given
// the function pointer), so only the pointer differs.
//
// Prints a Markdown table on stdout. Exit 0 whether or not a goal is met (the table says so); 2 when
// the shim is not preloaded or the driver found is not the double; 1 when a call failed.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>
#include <vector>

#include "tests/fakecuda/fakecuda_control.h"

#ifndef BENCH_BUILD_INFO
#define BENCH_BUILD_INFO "unknown"
#endif

namespace {

// ------------------------------------------------------------------ options
struct Options {
  int rounds = 201;
  int calls = 2000;
  int warmup = 20;  // unmeasured rounds of every operation first
  std::string commit = "unknown";
  std::string command;  // the command that reruns this measurement, as printed in the header
};

[[noreturn]] void usage(const char* argv0, int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: %s [--rounds R] [--calls N] [--warmup W] [--commit HASH] [--command TEXT]\n"
               "  R rounds (default 201) of two batches of N calls (default 2000), wrapper and direct,\n"
               "  alternating which goes first; W unmeasured rounds first (default 20).\n"
               "  Run it with LD_PRELOAD=libcudashim.so and the test-double libcuda.so.1 on LD_LIBRARY_PATH.\n",
               argv0);
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") usage(argv[0], 0);
    if (i + 1 >= argc) usage(argv[0], 2);
    const char* v = argv[++i];
    if (a == "--rounds") {
      o.rounds = std::atoi(v);
    } else if (a == "--calls") {
      o.calls = std::atoi(v);
    } else if (a == "--warmup") {
      o.warmup = std::atoi(v);
    } else if (a == "--commit") {
      o.commit = v;
    } else if (a == "--command") {
      o.command = v;
    } else {
      usage(argv[0], 2);
    }
  }
  if (o.rounds < 1 || o.calls < 1 || o.warmup < 0) usage(argv[0], 2);
  return o;
}

// ------------------------------------------------------------------ the functions under test
struct Fns {
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuStreamSynchronize_v2000 stream_sync;
  PFN_cuMemAlloc_v3020 mem_alloc;
  PFN_cuMemFree_v3020 mem_free;
  PFN_cuMemcpyHtoDAsync_v3020 copy_htod_async;
};

// The async copy's ends: a device buffer allocated once through the shim, and pageable host
// memory (the shim asks the driver what the host side is: shim/sync_observer.cpp host_is_pageable).
CUdeviceptr g_copy_dst = 0;
alignas(4096) char g_copy_src[4096];

using Clock = std::chrono::steady_clock;
inline uint64_t elapsed_ns(Clock::time_point a, Clock::time_point b) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

// One batch each: `n` calls through `f`, timed as a whole. Results are OR-ed into `bad` (a failing call
// would be a cheaper call: the run is rejected). noinline: wrapper and direct run this same code.
__attribute__((noinline)) uint64_t batch_launch(const Fns& f, int n, unsigned& bad) {
  const PFN_cuLaunchKernel_v4000 fn = f.launch;
  const CUfunction func = reinterpret_cast<CUfunction>(0x1);  // the double accepts any non-null handle
  unsigned acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) acc |= fn(func, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  const auto t1 = Clock::now();
  bad |= acc;
  return elapsed_ns(t0, t1);
}

__attribute__((noinline)) uint64_t batch_stream_sync(const Fns& f, int n, unsigned& bad) {
  const PFN_cuStreamSynchronize_v2000 fn = f.stream_sync;
  unsigned acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) acc |= fn(nullptr);
  const auto t1 = Clock::now();
  bad |= acc;
  return elapsed_ns(t0, t1);
}

__attribute__((noinline)) uint64_t batch_alloc_free(const Fns& f, int n, unsigned& bad) {
  const PFN_cuMemAlloc_v3020 alloc = f.mem_alloc;
  const PFN_cuMemFree_v3020 release = f.mem_free;
  unsigned acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    CUdeviceptr d = 0;
    acc |= alloc(&d, 4096);
    acc |= release(d);
  }
  const auto t1 = Clock::now();
  bad |= acc;
  return elapsed_ns(t0, t1);
}

// An async host-to-device copy of 4 KiB from pageable memory on the legacy stream: the copy
// hook's path (call site, the pageable check, the copy's bytes).
__attribute__((noinline)) uint64_t batch_copy_async(const Fns& f, int n, unsigned& bad) {
  const PFN_cuMemcpyHtoDAsync_v3020 fn = f.copy_htod_async;
  unsigned acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) acc |= fn(g_copy_dst, g_copy_src, sizeof g_copy_src, nullptr);
  const auto t1 = Clock::now();
  bad |= acc;
  return elapsed_ns(t0, t1);
}

// A sync, then a launch: the sync's drain leaves a mark that the launch ends (shim/drain_idle.h:
// one more clock read and two relaxed atomic adds at the sync's site), the pattern of a training
// step's read-back and its next kernel.
__attribute__((noinline)) uint64_t batch_sync_launch(const Fns& f, int n, unsigned& bad) {
  const PFN_cuStreamSynchronize_v2000 sync = f.stream_sync;
  const PFN_cuLaunchKernel_v4000 launch = f.launch;
  const CUfunction func = reinterpret_cast<CUfunction>(0x1);
  unsigned acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    acc |= sync(nullptr);
    acc |= launch(func, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
  }
  const auto t1 = Clock::now();
  bad |= acc;
  return elapsed_ns(t0, t1);
}

// Reference, not a hooked call: n reads of the clock the recorder reads (recorder/clock.h).
__attribute__((noinline)) uint64_t batch_clock_reads(int n) {
  uint64_t acc = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    acc += static_cast<uint64_t>(ts.tv_nsec);
  }
  const auto t1 = Clock::now();
  asm volatile("" : : "r"(acc));
  return elapsed_ns(t0, t1);
}

struct Operation {
  const char* name;      // as the table shows it
  const char* abis;      // exact ABIs it calls, as the shim counts them
  double goal_ns;        // added cost allowed per iteration
  uint64_t (*batch)(const Fns&, int, unsigned&);
  const char* counted[2];  // ABIs whose shim call counts must grow by one per wrapper iteration
};

const Operation kOps[] = {
    {"pass-through launch", "cuLaunchKernel", 15.0, batch_launch, {"cuLaunchKernel", nullptr}},
    {"timed sync", "cuStreamSynchronize (delay 0)", 40.0, batch_stream_sync, {"cuStreamSynchronize", nullptr}},
    {"alloc+free pair, ledger", "cuMemAlloc_v2(4096) + cuMemFree_v2", 150.0, batch_alloc_free,
     {"cuMemAlloc_v2", "cuMemFree_v2"}},
    {"sync then launch", "cuStreamSynchronize (delay 0) + cuLaunchKernel", 80.0, batch_sync_launch,
     {"cuStreamSynchronize", "cuLaunchKernel"}},
    {"async copy, pageable", "cuMemcpyHtoDAsync_v2(4096, pageable)", 60.0, batch_copy_async, {"cuMemcpyHtoDAsync_v2", nullptr}},
};
constexpr size_t kOpCount = sizeof(kOps) / sizeof(kOps[0]);

// ------------------------------------------------------------------ statistics
double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(pos);
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

struct Result {
  double direct, shim, added, ratio;   // medians of per-call ns over rounds; added = shim - direct
  double diff_p25, diff_p50, diff_p75;  // per-round paired differences (shim - direct of one round)
};

Result measure(const Operation& op, const Fns& shim, const Fns& direct, const Options& o, unsigned& bad) {
  for (int r = 0; r < o.warmup; ++r) {
    op.batch(shim, o.calls, bad);
    op.batch(direct, o.calls, bad);
  }
  std::vector<double> s(static_cast<size_t>(o.rounds)), d(s.size()), diff(s.size());
  const double n = o.calls;
  for (size_t r = 0; r < s.size(); ++r) {
    if (r % 2 == 0) {
      s[r] = static_cast<double>(op.batch(shim, o.calls, bad)) / n;
      d[r] = static_cast<double>(op.batch(direct, o.calls, bad)) / n;
    } else {
      d[r] = static_cast<double>(op.batch(direct, o.calls, bad)) / n;
      s[r] = static_cast<double>(op.batch(shim, o.calls, bad)) / n;
    }
    diff[r] = s[r] - d[r];
  }
  Result res{};
  res.direct = median(d);
  res.shim = median(s);
  res.added = res.shim - res.direct;
  res.ratio = res.direct > 0 ? res.shim / res.direct : 0;
  res.diff_p25 = quantile(diff, 0.25);
  res.diff_p50 = quantile(diff, 0.5);
  res.diff_p75 = quantile(diff, 0.75);
  return res;
}

// ------------------------------------------------------------------ host facts for the header
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string object_of(const void* addr) {
  Dl_info info{};
  if (dladdr(addr, &info) == 0 || info.dli_fname == nullptr) return "?";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash ? slash + 1 : info.dli_fname;
}

[[noreturn]] void die(int rc, const char* what) {
  std::fprintf(stderr, "bench_hook_overhead: %s\n", what);
  std::exit(rc);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);

  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) die(2, dlerror());
  const auto entry_point = reinterpret_cast<fakecuda_entry_point_fn>(dlsym(driver, "fakecuda_entry_point"));
  const auto set_delay = reinterpret_cast<fakecuda_set_sync_delay_ns_fn>(dlsym(driver, "fakecuda_set_sync_delay_ns"));
  const auto fake_count = reinterpret_cast<fakecuda_call_count_fn>(dlsym(driver, "fakecuda_call_count"));
  if (entry_point == nullptr || set_delay == nullptr || fake_count == nullptr)
    die(2, "the libcuda.so.1 found is not the test-double driver with fakecuda_entry_point (LD_LIBRARY_PATH?)");
  const auto gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(driver, "cuGetProcAddress_v2"));
  if (gpa == nullptr) die(2, "libcuda.so.1 has no cuGetProcAddress_v2");

  // Through the shim: what a runtime-loaded program gets from cuGetProcAddress_v2.
  auto resolve = [&](const char* base) -> void* {
    void* fn = nullptr;
    CUdriverProcAddressQueryResult st{};
    if (gpa(base, &fn, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) != CUDA_SUCCESS ||
        st != CU_GET_PROC_ADDRESS_SUCCESS || fn == nullptr) {
      std::fprintf(stderr, "bench_hook_overhead: cuGetProcAddress_v2(%s) failed\n", base);
      std::exit(1);
    }
    return fn;
  };
  // Direct: the double's own function for the exact ABI the wrapper forwards to.
  auto own = [&](const char* abi) -> void* {
    void* fn = entry_point(abi);
    if (fn == nullptr) {
      std::fprintf(stderr, "bench_hook_overhead: the double has no %s\n", abi);
      std::exit(2);
    }
    return fn;
  };

  Fns shim{reinterpret_cast<PFN_cuLaunchKernel_v4000>(resolve("cuLaunchKernel")),
           reinterpret_cast<PFN_cuStreamSynchronize_v2000>(resolve("cuStreamSynchronize")),
           reinterpret_cast<PFN_cuMemAlloc_v3020>(resolve("cuMemAlloc")),
           reinterpret_cast<PFN_cuMemFree_v3020>(resolve("cuMemFree")),
           reinterpret_cast<PFN_cuMemcpyHtoDAsync_v3020>(resolve("cuMemcpyHtoDAsync"))};
  Fns direct{reinterpret_cast<PFN_cuLaunchKernel_v4000>(own("cuLaunchKernel")),
             reinterpret_cast<PFN_cuStreamSynchronize_v2000>(own("cuStreamSynchronize")),
             reinterpret_cast<PFN_cuMemAlloc_v3020>(own("cuMemAlloc_v2")),
             reinterpret_cast<PFN_cuMemFree_v3020>(own("cuMemFree_v2")),
             reinterpret_cast<PFN_cuMemcpyHtoDAsync_v3020>(own("cuMemcpyHtoDAsync_v2"))};
  const void* pairs[][2] = {{reinterpret_cast<void*>(shim.launch), reinterpret_cast<void*>(direct.launch)},
                            {reinterpret_cast<void*>(shim.stream_sync), reinterpret_cast<void*>(direct.stream_sync)},
                            {reinterpret_cast<void*>(shim.mem_alloc), reinterpret_cast<void*>(direct.mem_alloc)},
                            {reinterpret_cast<void*>(shim.mem_free), reinterpret_cast<void*>(direct.mem_free)},
                            {reinterpret_cast<void*>(shim.copy_htod_async), reinterpret_cast<void*>(direct.copy_htod_async)}};
  for (const auto& p : pairs)
    if (p[0] == p[1])
      die(2, "cuGetProcAddress_v2 handed out the driver's own function, not a wrapper: the shim is not preloaded "
             "(run with LD_PRELOAD=<build>/lib/libcudashim.so)");

  // A process that allocates has a current context (the ledger asks the driver for its device).
  auto init = reinterpret_cast<PFN_cuInit_v2000>(resolve("cuInit"));
  auto retain = reinterpret_cast<PFN_cuDevicePrimaryCtxRetain_v7000>(resolve("cuDevicePrimaryCtxRetain"));
  auto set_current = reinterpret_cast<PFN_cuCtxSetCurrent_v4000>(resolve("cuCtxSetCurrent"));
  CUcontext ctx = nullptr;
  if (init(0) != CUDA_SUCCESS || retain(&ctx, 0) != CUDA_SUCCESS || set_current(ctx) != CUDA_SUCCESS)
    die(1, "could not make device 0's primary context current");
  set_delay(0);
  if (shim.mem_alloc(&g_copy_dst, sizeof g_copy_src) != CUDA_SUCCESS) die(1, "could not allocate the copy's device buffer");

  // Each wrapper ends at the double's function we compare it with: one call through the wrapper is one
  // call of that exact entry point. And the shim counts what goes through its wrappers.
  using ApiCallsFn = unsigned long long (*)(const char*);
  const auto shim_calls = reinterpret_cast<ApiCallsFn>(dlsym(RTLD_DEFAULT, "cudashim_api_calls"));
  if (shim_calls == nullptr) die(2, "cudashim_api_calls not found: the shim is not preloaded");
  {
    unsigned bad = 0;
    const char* abis[] = {"cuLaunchKernel", "cuStreamSynchronize", "cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoDAsync_v2"};
    uint64_t before[5], shim_before[5];
    for (int i = 0; i < 5; ++i) before[i] = fake_count(abis[i]), shim_before[i] = shim_calls(abis[i]);
    batch_launch(shim, 1, bad);
    batch_stream_sync(shim, 1, bad);
    batch_alloc_free(shim, 1, bad);
    batch_copy_async(shim, 1, bad);
    for (int i = 0; i < 5; ++i) {
      if (fake_count(abis[i]) != before[i] + 1 || shim_calls(abis[i]) != shim_before[i] + 1) {
        std::fprintf(stderr, "bench_hook_overhead: one call through the wrapper of %s made %llu call(s) of the "
                     "double's %s and counted %llu in the shim (expected 1 and 1)\n", abis[i],
                     static_cast<unsigned long long>(fake_count(abis[i]) - before[i]), abis[i],
                     static_cast<unsigned long long>(shim_calls(abis[i]) - shim_before[i]));
        return 2;
      }
    }
    if (bad != 0) die(1, "a call through the shim failed");
  }

  // Each operation's counts, before and after it alone (two operations may call one ABI).
  unsigned long long counted[kOpCount][2] = {};
  Result results[kOpCount];
  unsigned bad = 0;
  for (size_t i = 0; i < kOpCount; ++i) {
    for (int k = 0; k < 2; ++k)
      if (kOps[i].counted[k]) counted[i][k] = shim_calls(kOps[i].counted[k]);
    results[i] = measure(kOps[i], shim, direct, o, bad);
    for (int k = 0; k < 2; ++k)
      if (kOps[i].counted[k]) counted[i][k] = shim_calls(kOps[i].counted[k]) - counted[i][k];
  }
  std::vector<double> clock_reads(static_cast<size_t>(o.rounds));
  for (int r = 0; r < o.warmup; ++r) batch_clock_reads(o.calls);
  for (double& c : clock_reads) c = static_cast<double>(batch_clock_reads(o.calls)) / o.calls;
  if (bad != 0) die(1, "a measured call failed: the timings are not of the call they claim to be");

  // Every wrapper iteration was recorded (warm-up included), no more, no less.
  const unsigned long long expected = static_cast<unsigned long long>(o.warmup + o.rounds) * o.calls;
  std::string recorded;
  for (size_t i = 0; i < kOpCount; ++i)
    for (int k = 0; k < 2; ++k) {
      if (!kOps[i].counted[k]) continue;
      const unsigned long long got = counted[i][k];
      if (got != expected) {
        std::fprintf(stderr, "bench_hook_overhead: the shim counted %llu calls of %s, the benchmark made %llu\n", got,
                     kOps[i].counted[k], expected);
        return 1;
      }
      recorded += (recorded.empty() ? "" : ", ") + std::string(kOps[i].counted[k]) + " " + std::to_string(got);
    }

  utsname un{};
  uname(&un);
  std::printf("# cudashim hook overhead (CPU, test-double driver)\n\n");
  std::printf("- date: %s\n", utc_now().c_str());
  std::printf("- host CPU: %s, %d usable CPUs (nproc), kernel %s %s; nothing pinned\n", cpu_model().c_str(),
              usable_cpus(), un.sysname, un.release);
  std::printf("- git commit: %s\n", o.commit.c_str());
  std::printf("- build: %s, compiler %s\n", BENCH_BUILD_INFO, __VERSION__);
  if (!o.command.empty()) std::printf("- command: `%s`\n", o.command.c_str());
  std::printf("- wrappers from %s (via cuGetProcAddress_v2), direct calls to %s (fakecuda_entry_point)\n",
              object_of(reinterpret_cast<void*>(shim.launch)).c_str(),
              object_of(reinterpret_cast<void*>(direct.launch)).c_str());
  std::printf("- method: %d rounds x (%d calls through the wrapper, %d calls direct), order alternating by round, "
              "after %d warm-up rounds; per-call ns = batch time / %d; medians over rounds; "
              "added = median(shim) - median(direct); sync delay 0; primary context current\n",
              o.rounds, o.calls, o.calls, o.warmup, o.calls);
  std::printf("- host reference: one clock_gettime(CLOCK_MONOTONIC) read (what a timed wrapper does twice) "
              "takes %.1f ns here (median, same method)\n", median(clock_reads));
  std::printf("- calls recorded by the shim through the measured wrappers: %s (= (warm-up + rounds) x calls)\n\n",
              recorded.c_str());

  std::printf("| operation | ABIs | direct median ns | through shim median ns | added ns | ratio | goal ns | met? |\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---|\n");
  for (size_t i = 0; i < kOpCount; ++i) {
    const Result& r = results[i];
    std::printf("| %s | %s | %.1f | %.1f | %.1f | %.2f | <= %.0f | %s |\n", kOps[i].name, kOps[i].abis, r.direct,
                r.shim, r.added, r.ratio, kOps[i].goal_ns, r.added <= kOps[i].goal_ns ? "yes" : "**no**");
  }
  std::printf("\nPer-round paired difference (shim - direct, same round), ns:\n\n");
  std::printf("| operation | p25 | median | p75 |\n|---|---:|---:|---:|\n");
  for (size_t i = 0; i < kOpCount; ++i)
    std::printf("| %s | %.1f | %.1f | %.1f |\n", kOps[i].name, results[i].diff_p25, results[i].diff_p50,
                results[i].diff_p75);
  return 0;
}
