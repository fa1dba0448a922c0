// wait_sampler.cpp: samples the main thread's Python line while a thread with no Python frame
// reads back from the device (shim/wait_sampler.h).
#include "shim/wait_sampler.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "policy/sync_rules.h"
#include "recorder/clock.h"
#include "recorder/own_thread.h"
#include "recorder/thread_slots.h"
#include "shim/python_stack.h"
#include "shim/sync_observer.h"
#include "shim/thread_flags.h"

namespace cudashim::shim {

ReadbackMark g_readback_mark;

namespace {

namespace rec = cudashim::recorder;

constexpr long kPollNs = 1000000;             // the mark is looked at every millisecond
constexpr uint64_t kMinGapNs = 4000000;       // at most one sample per 4 ms
constexpr uint64_t kLeaveAfterNs = 2000000000;  // no new mark for 2 s: the thread leaves

std::atomic<bool> g_running{false};
uint64_t g_readbacks_at_tick = 0;  // the flush thread's own

// The main thread's scheduler state (proc(5), /proc/<pid>/task/<tid>/stat field 3): 'S', 'R', ...;
// 0 when it cannot be read.
char main_thread_state(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[512];
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  return p != nullptr && p[1] == ' ' ? p[2] : 0;
}

// Hooked calls the main thread has made: what moves between two steps of its loop.
uint64_t main_thread_calls(rec::ThreadSlot*& slot, uint32_t pid) {
  if (slot == nullptr || slot->tid.load(std::memory_order_relaxed) != pid) {
    slot = nullptr;
    rec::ThreadSlot* t = rec::slot_table();
    const uint32_t used = rec::slots_in_use();
    for (uint32_t i = 0; i < used && slot == nullptr; ++i)
      if (t[i].tid.load(std::memory_order_relaxed) == pid) slot = &t[i];
    if (slot == nullptr) return 0;
  }
  uint64_t calls = 0;
  for (const rec::HookCounters& h : slot->hooks) calls += h.calls.load(std::memory_order_relaxed);
  return calls;
}

// The waiter's sites seen so far, by the main thread's location (a site's first sample reads
// the frames as text, later ones the location only).
struct Seen {
  const void* code;
  const void* ip;
  const rec::CallSite* reader;
  rec::CallSite* site;
};
Seen g_seen[64];  // the sampler thread's own (one runs at a time); emptied in a forked child
int g_nseen = 0;

rec::CallSite* waiter_site(const rec::CallSite& reader, const rec::PyLocation& loc) {
  Seen (&seen)[64] = g_seen;
  int& nseen = g_nseen;
  for (int i = 0; i < nseen; ++i)
    if (seen[i].code == loc.code && seen[i].ip == loc.ip && seen[i].reader == &reader) return seen[i].site;
  rec::PyLocation again;
  rec::PyFrameText frames[rec::kMaxPyFrames];
  const int n = read_main_thread(again, frames, rec::kMaxPyFrames);
  // The main thread moved on between the two reads: this sample is lost, not misplaced.
  if (n == 0 || again.code != loc.code || again.ip != loc.ip) return nullptr;
  rec::CallSite* s = rec::sampled_site_for(reader, loc, frames, n);
  if (s != nullptr && nseen < 64) seen[nseen++] = {loc.code, loc.ip, &reader, s};
  return s;
}

void* sample_loop(void*) {
  InternalScope internal;  // whatever this thread reaches is cudashim's own
  const uint32_t pid = static_cast<uint32_t>(getpid());
  char path[64];
  std::snprintf(path, sizeof path, "/proc/self/task/%u/stat", pid);
  rec::ThreadSlot* main_slot = nullptr;
  ReadbackMark& mark = g_readback_mark;
  uint64_t last_readbacks = mark.readbacks.load(std::memory_order_relaxed);
  uint64_t last_new = now_ticks(), last_sample = 0;
  for (;;) {
    const timespec poll{0, kPollNs};
    nanosleep(&poll, nullptr);
    const uint64_t now = now_ticks();
    const uint64_t copies = mark.copies.load(std::memory_order_acquire);
    const uint64_t readbacks = mark.readbacks.load(std::memory_order_relaxed);
    if (readbacks == last_readbacks) {
      if (ticks_to_ns(now - last_new) >= kLeaveAfterNs) break;
      continue;
    }
    last_readbacks = readbacks;
    last_new = now;
    // Another copy since the read-back (the next step's batch): the wait for it is over.
    if (mark.readback_copy.load(std::memory_order_relaxed) != copies) continue;
    if (last_sample != 0 && ticks_to_ns(now - last_sample) < kMinGapNs) continue;
    const rec::CallSite* reader = mark.site.load(std::memory_order_relaxed);
    if (reader == nullptr || reader->captured.load(std::memory_order_acquire) != 2) continue;
    const char state = main_thread_state(path);
    if (state != 'S' && state != 'D') continue;  // working, not waiting (or gone: 'Z')
    rec::PyLocation loc;
    if (read_main_thread(loc, nullptr, 0) == 0) continue;
    last_sample = now;
    rec::CallSite* s = waiter_site(*reader, loc);
    if (s == nullptr) continue;
    reader->waiter_samples.fetch_add(1, std::memory_order_relaxed);
    rec::site_hit(s, 0, reader->hits.load(std::memory_order_relaxed) ? reader->bytes.load(std::memory_order_relaxed) /
                                                                           reader->hits.load(std::memory_order_relaxed)
                                                                     : 0,
                  main_thread_calls(main_slot, pid), now);
    // Judged once it holds its share of the read-back's samples (a hand-off's line never does).
    if (policy::waiter_is_finding(*s)) judge_site(*s, now);
  }
  g_running.store(false, std::memory_order_release);
  return nullptr;
}

}  // namespace

void wait_sampler_tick() {
  const uint64_t n = g_readback_mark.readbacks.load(std::memory_order_relaxed);
  const bool moving = n != g_readbacks_at_tick;
  g_readbacks_at_tick = n;
  if (!moving || n <= policy::sync_thresholds().warmup_hits || g_running.load(std::memory_order_acquire)) return;
  if (g_running.exchange(true, std::memory_order_acq_rel)) return;
  // Like the flush thread: no signal of the program's is delivered to it.
  if (!rec::start_own_thread(sample_loop, "cudashim-waits", 256 * 1024)) g_running.store(false, std::memory_order_release);
}

void wait_sampler_after_fork() {
  g_running.store(false, std::memory_order_relaxed);
  g_nseen = 0;  // the parent's sites: the table was emptied
  g_readbacks_at_tick = g_readback_mark.readbacks.load(std::memory_order_relaxed);
}

}  // namespace cudashim::shim
