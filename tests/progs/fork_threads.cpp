// fork_threads: forks while 8 threads are inside hooks, as a DataLoader does.
// Every child must run and exit normally (no inherited held lock, no finished
// one-time set-up skipping its own), count only its own calls (the report of a
// child is its own), and leave its own report file.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "driver_api.h"

using ApiCalls = unsigned long long (*)(const char*);

int main(int argc, char** argv) {
  const int forks = argc > 1 ? std::atoi(argv[1]) : 50;
  Resolver res(Path::procaddr);
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  auto sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(res.get("cuStreamSynchronize", "cuStreamSynchronize"));
  auto api_calls = reinterpret_cast<ApiCalls>(dlsym(RTLD_DEFAULT, "cudashim_api_calls"));
  if (api_calls == nullptr) {
    std::fprintf(stderr, "not running under cudashim\n");
    return 2;
  }
  std::atomic<bool> stop{false};
  std::atomic<unsigned long long> busy_calls{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 8; ++t)
    ts.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        CUdeviceptr p = 0;
        alloc(&p, 128);
        sync(nullptr);
        mfree(p);
        busy_calls.fetch_add(3, std::memory_order_relaxed);
      }
    });
  int failed = 0;
  for (int i = 0; i < forks; ++i) {
    const pid_t pid = fork();
    if (pid == 0) {
      // Child: the shim's counters start at zero here.
      CUdeviceptr p = 0;
      for (int k = 0; k < 3; ++k) {
        if (alloc(&p, 64) != CUDA_SUCCESS || mfree(p) != CUDA_SUCCESS) _exit(3);
      }
      const unsigned long long mine = api_calls("cuMemAlloc_v2");
      if (mine != 3) {
        std::fprintf(stderr, "child %d: cuMemAlloc_v2 counted %llu, expected its own 3\n", getpid(), mine);
        _exit(4);
      }
      std::exit(0);  // a normal exit: the report is written by the shim's destructor
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "child %d ended with status %d\n", pid, status);
      ++failed;
    }
  }
  stop = true;
  for (auto& t : ts) t.join();
  if (failed) return 1;
  // The parent's own counts: all the busy threads' calls, exactly.
  const unsigned long long n = busy_calls.load() / 3;
  std::printf("{\"expect_calls\": {\"cuMemAlloc_v2\": %llu, \"cuStreamSynchronize\": %llu, \"cuMemFree_v2\": %llu}}\n",
              n, n, n);
  return 0;
}
