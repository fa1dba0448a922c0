// endings: a process that makes hooked calls on several threads and then ends in the
// way argv[1] names. tests/preload/endings.py runs each with and without the shim:
// the end must be the same, and with the shim a complete report must be left.
//   sigterm T      T threads call hooks forever (syncs the double delays: mostly inside a
//                  hook); "ready" on stdout; the harness sends SIGTERM
//   exit_thread T  T threads call hooks forever; thread 0 calls exit(9) after 20000 rounds
//   throw T        the same, but thread 0 throws an exception nobody catches (terminate -> abort)
//   nocuda         no CUDA call at all; "ready"; the harness sends SIGTERM
//   ignored        SIGTERM set to SIG_IGN before any CUDA call: it stays ignored (exit 0)
//   own            the program's own SIGTERM handler, set before any CUDA call, stays in
//                  place and runs; it exits with 4
//   pthread_exit   100 rounds, then the main thread calls pthread_exit(0): the process ends
//                  (exit 0) when its last thread does (pthread_exit(3))
//   _exit, _Exit   100 rounds, then _exit(5) or _Exit(6): no destructor, no atexit
//   exec           100 rounds, an exec that fails (ENOENT), 100 more, then execl("/bin/sh",
//                  "sh", "-c", "exit 7"): the new image makes no CUDA call
//   pthread_exit_worker  one thread calls hooks forever; "ready"; the main thread calls
//                  pthread_exit(0); the harness sends SIGTERM
//   chain          100 rounds, then the program installs its own SIGTERM handler, which
//                  chains to the one it replaced unless that was SIG_DFL or SIG_IGN (the
//                  usual shape); "ready"; the harness sends SIGTERM; the handler sets a flag
//                  and main returns 0 (issue 22.7: the shim's handler, chained to, killed it)
//   altstack       the program's own SIGSEGV handler (SA_SIGINFO | SA_ONSTACK | SA_RESETHAND,
//                  an alternate stack), set before any CUDA call; 100 rounds (the shim
//                  installs its crash handler over it, chaining); then a stack overflow.
//                  The handler checks it runs on the alternate stack with SIGSEGV reset to
//                  SIG_DFL, says so, and _exit(3)s
//   normal         100 rounds, then main returns 0
//   quick_exit     100 rounds, then quick_exit(8) (at_quick_exit handlers, then _exit)
//   abort          100 rounds, then abort()
//   segv, bus, fpe, ill  100 rounds, then a real fault: a null write, a read past the end
//                  of a file mapping, an integer division by zero, an undefined instruction
//   exit_sweep T   T threads call hooks forever; main makes 200 rounds, says "exiting" and
//                  returns 0: the harness sends SIGTERM at a random delay into the exit path
#include <pthread.h>
#include <cerrno>
#include <cstring>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "driver_api.h"

namespace {

void say(const char* line) {
  std::printf("%s\n", line);
  std::fflush(stdout);
}

[[noreturn]] void park() {
  for (;;) pause();
}

// T threads doing rounds forever; thread 0 runs `last` after `rounds` of its own.
void workers(int threads, long rounds, void (*last)()) {
  const RoundCalls c = resolve_round_calls();
  std::atomic<int> warm{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      for (long i = 0;; ++i) {
        one_round(c);
        if (i == 100) warm.fetch_add(1);
        if (t == 0 && last != nullptr && i == rounds) last();
      }
    });
  while (warm.load() < threads) usleep(1000);
  say("ready");
  park();
}

void own_handler(int) {
  const char msg[] = "endings: the program's own SIGTERM handler ran\n";
  (void)!write(2, msg, sizeof msg - 1);
  exit(4);  // a normal exit: the shim's destructor writes the report
}

struct sigaction g_replaced {};
volatile sig_atomic_t g_term_seen = 0;

// The usual chaining handler: do our part, then call what was there unless it was a default.
void chaining_handler(int sig, siginfo_t* info, void* ctx) {
  g_term_seen = 1;
  if ((g_replaced.sa_flags & SA_SIGINFO) != 0) {
    if (g_replaced.sa_sigaction != nullptr) g_replaced.sa_sigaction(sig, info, ctx);
  } else if (g_replaced.sa_handler != SIG_DFL && g_replaced.sa_handler != SIG_IGN) {
    g_replaced.sa_handler(sig);
  }
}

void altstack_handler(int, siginfo_t*, void*) {
  stack_t now {};
  sigaltstack(nullptr, &now);
  struct sigaction cur {};
  sigaction(SIGSEGV, nullptr, &cur);
  const bool on_alt = (now.ss_flags & SS_ONSTACK) != 0;
  const bool reset = cur.sa_handler == SIG_DFL;  // SA_RESETHAND: the kernel resets the handler, not the flags
  const char* msg = on_alt && reset ? "endings: overflow handled on the alternate stack, SIGSEGV reset\n"
                    : on_alt        ? "endings: on the alternate stack, but SIGSEGV was not reset (SA_RESETHAND)\n"
                                    : "endings: the handler is not on the alternate stack\n";
  (void)!write(2, msg, std::strlen(msg));
  _exit(on_alt && reset ? 3 : 4);
}

__attribute__((noinline)) int overflow(int depth) {
  if (depth < 0) return 0;  // never: keeps the compiler from calling the recursion infinite
  volatile char frame[4096];
  frame[depth % sizeof frame] = static_cast<char>(depth);
  return overflow(depth + 1) + frame[0];
}

bool sigterm_is(void (*handler)(int)) {
  struct sigaction cur {};
  sigaction(SIGTERM, nullptr, &cur);
  return (cur.sa_flags & SA_SIGINFO) == 0 && cur.sa_handler == handler;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "sigterm";
  const int threads = argc > 2 ? std::atoi(argv[2]) : 8;
  if (!std::strcmp(mode, "sigterm")) workers(threads, 0, nullptr);
  if (!std::strcmp(mode, "exit_thread")) workers(threads, 20000, [] { exit(9); });
  if (!std::strcmp(mode, "throw")) workers(threads, 20000, [] { throw std::runtime_error("endings: nobody catches this"); });
  if (!std::strcmp(mode, "pthread_exit")) {
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    usleep(300000);  // the shim's flush thread is up
    pthread_exit(nullptr);
  }
  if (!std::strcmp(mode, "_exit") || !std::strcmp(mode, "_Exit")) {
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    if (mode[1] == 'e') _exit(5);
    _Exit(6);
  }
  if (!std::strcmp(mode, "exec")) {
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    char* const none[] = {const_cast<char*>("none"), nullptr};
    if (execv("/nonexistent/endings-exec", none) != -1 || errno != ENOENT) return 1;
    for (int i = 0; i < 100; ++i) one_round(c);
    execl("/bin/sh", "sh", "-c", "exit 7", static_cast<char*>(nullptr));
    return 1;
  }
  if (!std::strcmp(mode, "pthread_exit_worker")) {
    static const RoundCalls c = resolve_round_calls();
    std::thread([] {
      for (;;) one_round(c);
    }).detach();
    usleep(300000);
    say("ready");
    pthread_exit(nullptr);
  }
  if (!std::strcmp(mode, "chain")) {
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    usleep(300000);  // the shim's flush thread is up and has looked at SIGTERM
    struct sigaction sa {};
    sa.sa_sigaction = chaining_handler;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, &g_replaced);
    say("ready");
    while (!g_term_seen) one_round(c);
    one_round(c);
    say("SIGTERM handled, leaving normally");
    return 0;
  }
  if (!std::strcmp(mode, "normal") || !std::strcmp(mode, "quick_exit") || !std::strcmp(mode, "abort") ||
      !std::strcmp(mode, "segv") || !std::strcmp(mode, "bus") || !std::strcmp(mode, "fpe") || !std::strcmp(mode, "ill")) {
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    if (!std::strcmp(mode, "quick_exit")) quick_exit(8);
    if (!std::strcmp(mode, "abort")) abort();
    if (!std::strcmp(mode, "segv")) *static_cast<volatile int*>(nullptr) = 1;
    if (!std::strcmp(mode, "fpe")) {
      volatile int one = 1, zero = 0;  // both volatile: GCC turns 1 / x into compares, no idiv
      volatile int quotient = one / zero;
      (void)quotient;
    }
    if (!std::strcmp(mode, "ill")) __builtin_trap();  // ud2 on x86-64: SIGILL
    if (!std::strcmp(mode, "bus")) {
      FILE* f = std::tmpfile();
      void* m = mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fileno(f), 0);  // an empty file: no page behind it
      if (m == MAP_FAILED) return 1;
      return *static_cast<volatile char*>(m);
    }
    return !std::strcmp(mode, "normal") ? 0 : 1;
  }
  if (!std::strcmp(mode, "altstack")) {
    static char alt[1 << 16];
    stack_t ss{};
    ss.ss_sp = alt;
    ss.ss_size = sizeof alt;
    sigaltstack(&ss, nullptr);
    struct sigaction sa {};
    sa.sa_sigaction = altstack_handler;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    return overflow(0);
  }
  if (!std::strcmp(mode, "exit_sweep")) {
    static const RoundCalls c = resolve_round_calls();
    for (int t = 0; t < threads; ++t)
      std::thread([] {
        for (;;) one_round(c);
      }).detach();
    for (int i = 0; i < 200; ++i) one_round(c);
    say("exiting");
    return 0;
  }
  if (!std::strcmp(mode, "nocuda")) {
    say("ready");
    park();
  }
  if (!std::strcmp(mode, "ignored") || !std::strcmp(mode, "own")) {
    const bool own = !std::strcmp(mode, "own");
    void (*handler)(int) = own ? own_handler : SIG_IGN;
    signal(SIGTERM, handler);
    const RoundCalls c = resolve_round_calls();
    for (int i = 0; i < 100; ++i) one_round(c);
    usleep(500000);  // the shim's flush thread starts with the first call and looks at SIGTERM then
    if (!sigterm_is(handler)) {
      std::fprintf(stderr, "endings: SIGTERM's action was replaced behind the program's back\n");
      return 1;
    }
    raise(SIGTERM);
    if (own) {
      std::fprintf(stderr, "endings: own handler did not end the process\n");
      return 1;
    }
    one_round(c);
    say("still running after an ignored SIGTERM");
    return 0;
  }
  std::fprintf(stderr, "endings: unknown mode '%s'\n", mode);
  return 2;
}
