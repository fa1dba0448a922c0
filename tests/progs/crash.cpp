// crash: some hooked calls, then the end named in argv[1]:
//   segv      a null-pointer write (SIGSEGV)
//   abort     abort() (SIGABRT)
//   handler   a SIGSEGV handler of the program's own (as faulthandler does), then a
//             null write: the program's handler runs first and chains to the shim's
//   sticky    a stream sync the driver answers with 700 (run with
//             FAKECUDA_FAIL_SYNC_WITH=700): the record is written, the program exits 3
//   double    4 threads fault at once: the shim's handler is entered 4 times, one record
//   inhook    a thread sends SIGUSR1 to the main thread every 0.5 ms while it is inside
//             100 stream syncs (run with FAKECUDA_SYNC_DELAY_US=2000); the program's
//             handler counts them; then a null write
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_api.h"

static struct sigaction g_prev;
static void own_handler(int sig, siginfo_t* info, void* ctx) {
  const char msg[] = "crash: the program's own handler ran\n";
  (void)!write(2, msg, sizeof msg - 1);
  sigaction(sig, &g_prev, nullptr);  // chain, as Python's faulthandler does
  if ((g_prev.sa_flags & SA_SIGINFO) && g_prev.sa_sigaction) g_prev.sa_sigaction(sig, info, ctx);
}

static std::atomic<int> g_usr1{0};
static void on_usr1(int) { g_usr1.fetch_add(1); }

// noinline: the flight record's backtrace must name it (tests/preload/crash.py).
[[noreturn]] __attribute__((noinline)) static void fault() {
  volatile int* null = nullptr;
  *null = 42;  // SIGSEGV
  __builtin_unreachable();
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "segv";
  Resolver res(Path::procaddr);
  auto alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  auto launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(res.get("cuLaunchKernel", "cuLaunchKernel"));
  auto sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(res.get("cuStreamSynchronize", "cuStreamSynchronize"));
  CUdeviceptr d = 0;
  CHECK_CU(alloc(&d, 1 << 20));
  for (int i = 0; i < 5; ++i)
    launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  if (std::strcmp(mode, "sticky") == 0) {
    const CUresult r = sync(nullptr);
    std::fprintf(stderr, "crash: cuStreamSynchronize returned %d\n", r);
    return r == CUDA_ERROR_ILLEGAL_ADDRESS ? 3 : 1;
  }
  CHECK_CU(sync(nullptr));
  if (std::strcmp(mode, "handler") == 0) {
    struct sigaction sa {};
    sa.sa_sigaction = own_handler;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, &g_prev);
  }
  if (std::strcmp(mode, "abort") == 0) abort();
  if (std::strcmp(mode, "double") == 0) {
    std::atomic<bool> go{false};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
      ts.emplace_back([&go] {
        while (!go.load()) {
        }
        fault();
      });
    go.store(true);
    for (auto& t : ts) t.join();
  }
  if (std::strcmp(mode, "inhook") == 0) {
    struct sigaction sa {};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, nullptr);
    const pthread_t main_thread = pthread_self();
    std::atomic<bool> stop{false};
    std::thread sender([&] {
      while (!stop.load()) {
        pthread_kill(main_thread, SIGUSR1);
        usleep(500);
      }
    });
    for (int i = 0; i < 100; ++i) CHECK_CU(sync(nullptr));
    stop.store(true);
    sender.join();
    std::fprintf(stderr, "crash: %d SIGUSR1 handled during 100 syncs\n", g_usr1.load());
  }
  fault();
}
