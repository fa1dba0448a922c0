// run_command.cpp: wrap a job with the shim and summarize what it recorded.
#include "tools/run_command.h"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "tools/rank_compare.h"
#include "tools/report_reader.h"

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
  std::string out = opts.out_dir;
  if (out.empty()) {
    const std::time_t t = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&t));
    out = fmt::format("cudashim-runs/{}-{}", stamp, getpid());
  }
  fs::create_directories(out, ec);
  if (ec) {
    fmt::print(stderr, "cudashim run: cannot create the output folder {}: {}; pass --out DIR\n", out, ec.message());
    return 2;
  }
  out = fs::absolute(out, ec).string();

  // Our library first, the job's own entries after it. A libcudashim.so already there (a
  // Slurm TaskProlog's, a container's ENV) is dropped: one shim per process, this one.
  std::string preload = shim;
  if (const char* prev = std::getenv("LD_PRELOAD"); prev != nullptr) {
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
  }
  const pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "cudashim run: fork failed: {}\n", std::strerror(errno));
    return 127;
  }
  if (child == 0) {
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("CUDASHIM_OUT", out.c_str(), 1);
    std::vector<char*> argv;
    for (const auto& a : opts.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    fmt::print(stderr, "cudashim run: cannot start '{}': {}\n", opts.command[0], std::strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!opts.quiet) {
    std::vector<std::string> problems;
    const auto reports = load_reports({out}, problems);
    const bool color = isatty(2) && std::getenv("NO_COLOR") == nullptr;
    fmt::print(stderr, "\n== cudashim: {} process report(s) in {} ==\n", reports.size(), out);
    if (reports.empty())
      fmt::print(stderr, "no process made a CUDA call or asked for the driver\n");
    fmt::print(stderr, "{}{}", render_summary(reports, color), compare_ranks(reports).text);
    for (const auto& p : problems) fmt::print(stderr, "warning: {}\n", p);
    fmt::print(stderr, "command exited with {}\n", code);
  }
  return code;
}

}  // namespace cudashim::tools
