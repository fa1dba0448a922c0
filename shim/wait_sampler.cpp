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

// What the other threads' copies are at a sample: 2 a read-back in flight, 1 another copy in
// flight (and none is a read-back), 0 none.
int copies_in_flight() {
  rec::ThreadSlot* t = rec::slot_table();
  const uint32_t used = rec::slots_in_use();
  int most = 0;
  for (uint32_t i = 0; i < used && most < 2; ++i) {
    const int c = t[i].copy_in_flight.load(std::memory_order_relaxed);
    if (c > most) most = c;
  }
  return most;
}

// The waiter's sites seen so far, by the main thread's location.
struct Seen {
  const void* code;
  const void* ip;
  const rec::CallSite* reader;
  rec::CallSite* site;
};
Seen g_seen[64];  // the sampler thread's own (one runs at a time); emptied in a forked child
int g_nseen = 0;

// One sample of the main thread asleep: where, its frames, and what it was then.
struct Sample {
  rec::PyLocation loc;
  rec::PyFrameText frames[rec::kMaxPyFrames];
  int depth = 0;
  const rec::CallSite* reader = nullptr;
  uint64_t copies = 0;      // the mark's copies when it was taken: copy copies+1 decides a pending one
  uint64_t main_calls = 0;  // the main thread's hooked calls then (a new visit when they moved)
  uint64_t at = 0;          // ticks
};

// Counts `smp` at its waiter's site and judges that site.
void count_sample(const Sample& smp) {
  const rec::CallSite& reader = *smp.reader;
  rec::CallSite* site = nullptr;
  for (int i = 0; i < g_nseen && site == nullptr; ++i)
    if (g_seen[i].code == smp.loc.code && g_seen[i].ip == smp.loc.ip && g_seen[i].reader == &reader) site = g_seen[i].site;
  if (site == nullptr) {
    site = rec::sampled_site_for(reader, smp.loc, smp.frames, smp.depth);
    if (site == nullptr) return;
    if (g_nseen < 64) g_seen[g_nseen++] = {smp.loc.code, smp.loc.ip, &reader, site};
  }
  const uint64_t hits = reader.hits.load(std::memory_order_relaxed);
  const uint64_t visits = site->visits.load(std::memory_order_relaxed);
  rec::site_hit(site, 0, hits ? reader.bytes.load(std::memory_order_relaxed) / hits : 0, smp.main_calls, smp.at);
  if (site->visits.load(std::memory_order_relaxed) != visits) reader.waiter_visits.fetch_add(1, std::memory_order_relaxed);
  // Judged once it holds its share of the read-back's visits (policy::waiter_is_finding).
  if (policy::waiter_is_finding(*site)) judge_site(*site, smp.at);
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
  static Sample pending;  // this thread's own (one runs at a time)
  bool have_pending = false;
  for (;;) {
    const timespec poll{0, kPollNs};
    nanosleep(&poll, nullptr);
    const uint64_t now = now_ticks();
    const uint64_t readbacks = mark.readbacks.load(std::memory_order_relaxed);
    if (readbacks != last_readbacks) {
      last_readbacks = readbacks;
      last_new = now;
    } else if (ticks_to_ns(now - last_new) >= kLeaveAfterNs) {
      break;
    }
    const uint64_t copies = mark.copies.load(std::memory_order_acquire);
    // A pending sample is decided by the first copy started after it: a read-back means the main
    // thread slept until that read-back brought its value (XLA issues it once the step's kernels
    // are done: most of the wait of jax.device_get comes before the copy); a batch's copy to the
    // device means it slept in the next step's dispatch. Decided once, then dropped.
    if (have_pending && copies != pending.copies) {
      if (copies - pending.copies < 64 && mark.kind[(pending.copies + 1) % 64].load(std::memory_order_relaxed) == 1)
        count_sample(pending);
      have_pending = false;
    }
    if (have_pending) {
      if (ticks_to_ns(now - pending.at) >= kLeaveAfterNs) have_pending = false;  // no copy came
      continue;
    }
    if (last_sample != 0 && ticks_to_ns(now - last_sample) < kMinGapNs) continue;
    const rec::CallSite* reader = mark.site.load(std::memory_order_acquire);
    if (reader == nullptr || reader->captured.load(std::memory_order_acquire) != 2) continue;
    const char state = main_thread_state(path);
    if (state != 'S' && state != 'D') continue;  // working, not waiting (or gone: 'Z')
    // What the copies are doing now, before the frames are read: the main thread cannot have
    // woken for a copy that has not returned.
    const int in_flight = copies_in_flight();
    const uint64_t copies_then = mark.copies.load(std::memory_order_acquire);
    Sample& smp = pending;
    smp.depth = read_main_thread(smp.loc, smp.frames, rec::kMaxPyFrames);
    if (smp.depth == 0) continue;
    last_sample = now;
    smp.reader = reader;
    smp.copies = copies_then;
    smp.main_calls = main_thread_calls(main_slot, pid);
    smp.at = now;
    if (in_flight == 2)
      count_sample(smp);   // asleep while a read-back is being copied (into pageable memory: the wait is inside)
    else if (in_flight == 0)
      have_pending = true;  // the next copy decides
    // in_flight == 1: asleep while another copy (the batch's) is in flight: waiting for that one
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
