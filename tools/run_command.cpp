// run_command.cpp: wrap a job with the shim and summarize what it recorded.
#include "tools/run_command.h"

#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "tools/rank_compare.h"
#include "tools/report_reader.h"
#include "tools/summary_lines.h"

namespace fs = std::filesystem;

namespace cudashim::tools {

std::string locate_shim() {
  if (const char* env = std::getenv("CUDASHIM_LIB"); env && *env) return env;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  for (const fs::path& cand : {exe.parent_path() / "../lib/libcudashim.so", exe.parent_path() / "libcudashim.so",
                               exe.parent_path() / "../lib/cudashim/libcudashim.so"}) {
    if (fs::exists(cand, ec)) return fs::weakly_canonical(cand, ec).string();
  }
  return "";
}

namespace {

// Why execvp(name) failed with `err`, for the one line the child prints. The exit status
// is a shell's (bash's shell_execve): 127 when nothing by that name was found (ENOENT), 126
// when it was found and cannot be run (a folder, no execute permission, ENOTDIR, ...).
std::string exec_failure(const std::string& name, int err) {
  struct stat st;
  if (name.find('/') != std::string::npos && stat(name.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return "it is a folder, not a program";  // execve says EACCES
    if (err == EACCES && S_ISREG(st.st_mode) && (st.st_mode & 0111) == 0)
      return fmt::format("{} (the file is not executable: chmod +x {})", std::strerror(err), name);
  }
  return std::strerror(err);
}

// The job's process group (its first process's pid), for the forwarding handler.
volatile sig_atomic_t g_job_group = 0;
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kLeftoverWaitMs = 5000;  // how long the job's other processes get once its first one ended

// SIGINT, SIGTERM or SIGHUP sent to the wrapper (Ctrl-C in a terminal where the job is not
// the foreground group, `kill <wrapper>`, a closed terminal, Slurm's or Kubernetes' stop):
// passed to every process of the job, as `nsys profile` does; the wrapper itself goes on,
// waits for them and prints the summary. Async-signal-safe.
void forward_to_job(int sig) {
  const int saved = errno;
  if (const pid_t group = g_job_group; group > 0) kill(-group, sig);
  errno = saved;
}

void set_action(int sig, void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// The terminal the job reads from, when the wrapper is its foreground process group: the
// job then gets it (tcsetpgrp), so that Ctrl-C and Ctrl-Z reach the job's processes once,
// from the terminal, and the wrapper is left out. -1 when there is none.
int foreground_terminal() {
  if (!isatty(STDIN_FILENO)) return -1;
  return tcgetpgrp(STDIN_FILENO) == getpgrp() ? STDIN_FILENO : -1;
}

// In the child, before exec: the job's own process group, the terminal when the wrapper
// had it, the death of the wrapper (even SIGKILL) sent on as SIGTERM, default actions.
void enter_job_group(int tty, pid_t wrapper) {
  setpgid(0, 0);
  if (tty >= 0) {
    set_action(SIGTTOU, SIG_IGN);  // a background group may not take the terminal otherwise
    tcsetpgrp(tty, getpid());
  }
  for (const int sig : kForwarded) set_action(sig, SIG_DFL);
  set_action(SIGTTOU, SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != wrapper) raise(SIGTERM);  // the wrapper died before the line above
}

// Moves the terminal from process group `from` to `to`, only when `from` is its foreground
// group. A shell's `bg` continues a stopped job without giving it the terminal, and a job
// may end while in the background: the shell's terminal is then not ours to take (with
// SIGTTOU ignored tcsetpgrp succeeds; after Ctrl-Z and `bg` bash's next read of its
// terminal failed with EIO, bash exited, and the job died with the session).
void hand_terminal(int tty, pid_t from, pid_t to) {
  if (tty >= 0 && tcgetpgrp(tty) == from) tcsetpgrp(tty, to);
}

long monotonic_ms() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// Waits for the job's first process and returns its wait status. A stop of it (Ctrl-Z)
// stops the wrapper too, with the terminal given back, and a continue resumes the job. The
// wrapper is the job's subreaper (PR_SET_CHILD_SUBREAPER): processes of the job whose
// parent ended come to it, and are reaped here as they end.
int wait_for_job(pid_t child, int tty) {
  int status = 0;
  for (;;) {
    int st = 0;
    const pid_t w = waitpid(-1, &st, WUNTRACED);
    if (w < 0) {
      if (errno == EINTR) continue;
      return status;  // ECHILD: not ours any more (cannot happen for a child we did not wait for)
    }
    if (w != child) continue;  // another process of the job, reaped
    if (WIFSTOPPED(st)) {
      const int why = WSTOPSIG(st);
      if (tty >= 0 && (why == SIGTTIN || why == SIGTTOU) && tcgetpgrp(tty) == getpgrp() &&
          tcsetpgrp(tty, child) == 0) {
        // The job used the terminal while in the background (after `bg`), and a shell's `fg`
        // has given it to us since: the job's now, as if the `fg` had come first. (Had the
        // hand-off failed, the job would only stop again: we stop with it below instead.)
        kill(-child, SIGCONT);
        continue;
      }
      hand_terminal(tty, child, getpgrp());
      kill(getpid(), SIGSTOP);  // the shell sees its job stopped; `fg` or `bg` continues us
      hand_terminal(tty, getpgrp(), child);  // `fg` gave us the terminal first, `bg` did not
      kill(-child, SIGCONT);
      continue;
    }
    return st;
  }
}

// After the job's first process ended: the job's other processes (children that outlived
// it, the ones a forwarded signal also ends) finish writing their reports. Reaps them and
// waits until the job's process group is empty or kLeftoverWaitMs passed; returns true
// when some are still running then (a process that left the group, a daemon, is not waited for).
bool wait_for_leftovers(pid_t group) {
  const long until = monotonic_ms() + kLeftoverWaitMs;
  for (;;) {
    int st = 0;
    while (waitpid(-1, &st, WNOHANG) > 0) {
    }
    if (kill(-group, 0) != 0) return false;
    if (monotonic_ms() >= until) return true;
    const timespec tick{0, 10 * 1000 * 1000};
    nanosleep(&tick, nullptr);
  }
}

// The job's LD_PRELOAD: our library first, the job's own entries after it. A libcudashim.so
// already there (a Slurm TaskProlog's, a container's ENV) is dropped: one shim per process, this one.
std::string job_preload(const std::string& shim) {
  std::string preload = shim;
  const char* prev = std::getenv("LD_PRELOAD");
  if (prev == nullptr) return preload;
  std::string entry;
  for (const char* c = prev;; ++c) {
    if (*c == ':' || *c == ' ' || *c == '\0') {  // ld.so separates entries by either
      if (!entry.empty() && fs::path(entry).filename() != "libcudashim.so") preload += ":" + entry;
      entry.clear();
      if (*c == '\0') break;
    } else {
      entry += *c;
    }
  }
  return preload;
}

// cudashim-runs/<date>-<time>-<pid>, for a run without --out.
std::string default_out_dir() {
  const std::time_t t = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
  return fmt::format("cudashim-runs/{}-{}", stamp, getpid());
}

// The one summary of every process of the job, on stderr, after it ended.
void print_run_summary(const std::string& out, pid_t group, bool left, int code, bool verbose) {
  std::vector<std::string> problems;
  auto reports = load_reports({out}, problems);
  const bool color = isatty(2) && std::getenv("NO_COLOR") == nullptr;
  NoCudaProcesses idle = read_no_cuda({out}, reports, problems);
  const auto ranks = compare_ranks(reports);
  fold_quiet_reports(reports, verbose, idle);  // processes that only loaded the driver: in the one line
  fmt::print(stderr, "\n== cudashim: {} process report(s) in {} ==\n", reports.size(), out);
  if (reports.empty() && idle.count == 0) fmt::print(stderr, "no process made a CUDA call or asked for the driver\n");
  fmt::print(stderr, "{}{}{}", render_summary(reports, color, verbose), ranks.text, no_cuda_text(idle));
  for (const auto& p : problems) fmt::print(stderr, "warning: {}\n", p);
  if (left)
    fmt::print(stderr, "warning: processes of the job (process group {}) were still running {} s after it ended; "
                       "their reports are not in this summary\n", group, kLeftoverWaitMs / 1000);
  fmt::print(stderr, "command exited with {}\n", code);
}

}  // namespace

int run_command(const RunOptions& opts) {
  if (opts.command.empty()) {
    fmt::print(stderr, "cudashim run: no command given; usage: cudashim run [options] -- CMD [ARGS...]\n");
    return 2;
  }
  const std::string shim = opts.shim.empty() ? locate_shim() : opts.shim;
  std::error_code ec;
  if (shim.empty() || !fs::exists(shim, ec)) {
    fmt::print(stderr, "cudashim run: libcudashim.so not found{}; build it, or set CUDASHIM_LIB to its path\n",
               shim.empty() ? "" : " at " + shim);
    return 127;
  }
  std::string out = opts.out_dir.empty() ? default_out_dir() : opts.out_dir;
  fs::create_directories(out, ec);
  if (ec) {
    fmt::print(stderr, "cudashim run: cannot create the output folder {}: {}; pass --out DIR\n", out, ec.message());
    return 2;
  }
  out = fs::absolute(out, ec).string();

  const std::string preload = job_preload(shim);
  // The job runs in its own process group, so that a signal can reach all of it and
  // nothing else (the script or shell that started us shares our group).
  const int tty = foreground_terminal();
  const pid_t wrapper = getpid();
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  for (const int sig : kForwarded) set_action(sig, forward_to_job);
  if (tty >= 0) set_action(SIGTTOU, SIG_IGN);  // to take the terminal back from the job
  const pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "cudashim run: fork failed: {}\n", std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    enter_job_group(tty, wrapper);
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("CUDASHIM_OUT", out.c_str(), 1);
    // The wrapper prints the one summary of every process; the shim's own stays off unless
    // the user asked for it (issue 19: said once).
    setenv("CUDASHIM_SUMMARY", "0", 0);
    // Each process that makes no CUDA call leaves one line, so that the summary counts them.
    setenv("CUDASHIM_NO_CUDA_RECORD", "1", 0);
    std::vector<char*> argv;
    for (const auto& a : opts.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    const int err = errno;
    fmt::print(stderr, "cudashim run: cannot start '{}': {}\n", opts.command[0], exec_failure(opts.command[0], err));
    _exit(err == ENOENT ? 127 : 126);
  }
  setpgid(child, child);  // also here: whichever of the two runs first
  g_job_group = child;
  if (tty >= 0) tcsetpgrp(tty, child);
  const int status = wait_for_job(child, tty);
  const bool left = wait_for_leftovers(child);
  hand_terminal(tty, child, getpgrp());
  g_job_group = 0;
  for (const int sig : kForwarded) set_action(sig, SIG_DFL);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!opts.quiet) print_run_summary(out, child, left, code, opts.verbose);
  return code;
}

}  // namespace cudashim::tools
