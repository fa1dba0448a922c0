// process.cpp: the process facts a report names (identity, argv, the loaded libcuda), and
// the recorder's whole state (any activity? reset). The report itself: report/report.cpp.
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "recorder/clock.h"
#include "recorder/events.h"
#include "recorder/torch_memory.h"
#include "recorder/oom.h"
#include "recorder/recorder.h"
#include "symbols/bounded_read.h"
#include "symbols/walk_objects.h"

namespace cudashim::recorder {

std::string loaded_libcuda() {
  std::string found;
  symbols::walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr) return 0;
        const char* base = std::strrchr(name, '/');
        base = base ? base + 1 : name;
        if (std::strncmp(base, "libcuda.so", 10) != 0) return 0;
        *static_cast<std::string*>(data) = name;
        return 1;
      },
      &found);
  return found;
}

namespace {
constexpr std::size_t kCmdlineLimit = 1u << 20;  // the most of /proc/self/cmdline a report keeps
}  // namespace

std::vector<std::string> process_argv() {
  // Bounded (symbols/bounded_read.h): an argv past 1 MiB is cut there.
  bool truncated = false;
  auto read = symbols::read_regular("/proc/self/cmdline", kCmdlineLimit, &truncated);
  const std::string cmd = read ? std::move(read).value() : std::string();
  std::vector<std::string> argv;
  for (size_t pos = 0; pos < cmd.size();) {
    const size_t end = cmd.find('\0', pos);
    argv.emplace_back(cmd.data() + pos, (end == std::string::npos ? cmd.size() : end) - pos);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return argv;
}

namespace {

int rank_from_env() {
  for (const char* var : {"RANK", "SLURM_PROCID", "LOCAL_RANK"}) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r < (1 << 24)) return static_cast<int>(r);
  }
  return -1;
}

}  // namespace

void capture_process_info(ProcessInfo& info) {
  info.pid = getpid();
  info.ppid = getppid();
  info.rank = rank_from_env();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) info.host = host;
  char exe[4096] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n > 0) info.exe.assign(exe, static_cast<size_t>(n));
  info.argv = process_argv();
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  info.start_unix_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  info.start_mono_ns = monotonic_ns();
}

bool has_activity() {
  for (size_t h = 0; h < kHookCount; ++h)
    if (calls_of(h) != 0) return true;
  return g_events[static_cast<int>(Event::libcuda_dlopen_requests)].load(std::memory_order_relaxed) != 0;
}

void reset_all() {
  reset_slots();
  ledger_reset();
  oom_reset();
  torch_mem_reset();
  for (auto& e : g_events) e.store(0, std::memory_order_relaxed);
}

}  // namespace cudashim::recorder
