// primitives.cpp: what the building blocks of a hook cost on this host's CPU, so that a
// hook's cost on one machine can be explained against another's (bench/perf_table.py).
// Each operation runs in batches of 10,000 on one thread, single-threaded and uncontended;
// prints a markdown table of the median ns per operation over 31 batches.
//   bench_primitives
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr int kOps = 10000;
constexpr int kBatches = 31;

alignas(64) std::atomic<uint64_t> g_counter{0};
alignas(64) std::atomic<uint64_t> g_cas{0};
pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
thread_local uint64_t t_value = 0;

template <class F>
double per_op_ns(F&& op) {
  std::vector<double> v;
  for (int b = -3; b < kBatches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kOps; ++i) op();
    const auto t1 = std::chrono::steady_clock::now();
    if (b >= 0) v.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kOps);
  }
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main() {
  struct Row {
    const char* what;
    double ns;
  };
  uint64_t sink = 0;
  std::vector<Row> rows = {
      {"empty loop iteration", per_op_ns([&] { asm volatile("" ::: "memory"); })},
      {"rdtsc", per_op_ns([&] { sink += __rdtsc(); })},
      {"clock_gettime(CLOCK_MONOTONIC) (vDSO)", per_op_ns([&] {
         timespec ts;
         clock_gettime(CLOCK_MONOTONIC, &ts);
         sink += static_cast<uint64_t>(ts.tv_nsec);
       })},
      {"relaxed load + store (a thread's own counter)", per_op_ns([&] {
         g_counter.store(g_counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
       })},
      {"atomic fetch_add, relaxed (lock xadd), uncontended", per_op_ns([&] {
         g_counter.fetch_add(1, std::memory_order_relaxed);
       })},
      {"atomic compare_exchange (lock cmpxchg), uncontended", per_op_ns([&] {
         uint64_t cur = g_cas.load(std::memory_order_relaxed);
         g_cas.compare_exchange_strong(cur, cur + 1, std::memory_order_acq_rel);
       })},
      {"pthread_mutex lock + unlock, uncontended", per_op_ns([&] {
         pthread_mutex_lock(&g_mu);
         pthread_mutex_unlock(&g_mu);
       })},
      {"thread_local increment", per_op_ns([&] { asm volatile("" ::: "memory"); ++t_value; })},
      {"clock_gettime(CLOCK_THREAD_CPUTIME_ID) (system call)", per_op_ns([&] {
         timespec ts;
         clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
         sink += static_cast<uint64_t>(ts.tv_nsec);
       })},
      {"getppid() (a minimal system call)", per_op_ns([&] { sink += static_cast<uint64_t>(getppid()); })},
  };
  std::printf("| operation | median ns |\n|---|---:|\n");
  for (const Row& r : rows) std::printf("| %s | %.1f |\n", r.what, r.ns);
  std::fprintf(stderr, "(sink %llu)\n", static_cast<unsigned long long>(sink + t_value));
  return 0;
}
