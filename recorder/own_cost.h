// own_cost.h: what cudashim itself costs the process it observes (issue 33, item 4): the CPU
// time of the threads it started (the flush thread, the wait sampler: recorder/own_thread.h)
// and an estimate of the time its hooks added to the program's own threads.
//
// The threads' time is exact: each of them registers its thread id when it starts and adds its
// own CPU time to a total when it ends; the live ones are read through their per-thread CPU
// clocks (the clock pthread_getcpuclockid names, built from the thread id). The hooks' time is
// an estimate, not a measurement (timing every hook would cost more than the hook): the count of
// hooked calls of each kind times that kind's added cost measured by the hook benchmark
// (bench/results/hook_overhead-compare-issue32-cpu.md: a pass-through call 7 ns, a timed call
// 33 ns, an allocation or a free about half of the 96 ns pair; a timed call from Python also
// reads the caller's frame, 35 ns more: bench/results/python_site_overhead-pyver-cpu.md).
#pragma once
#include <cstdint>

#include "recorder/thread_slots.h"

namespace cudashim::recorder {

// Called on one of cudashim's own threads: when it starts, and just before it ends.
void own_thread_begin();
void own_thread_end();

// The CPU time of every own thread of this process so far (the ended ones' and the live ones').
uint64_t own_threads_cpu_ns();

// Added cost per hooked call, ns (the benchmarks above; docs/report-schema.md, "self_cost").
inline constexpr uint64_t kHookPassNs = 7;
inline constexpr uint64_t kHookTimedNs = 33;
inline constexpr uint64_t kHookMemoryNs = 48;
inline constexpr uint64_t kHookPythonFrameNs = 35;

struct OwnCost {
  uint64_t threads_cpu_ns = 0;  // own_threads_cpu_ns()
  uint64_t hook_calls = 0;      // hooked calls made by the program (nested ones counted once)
  uint64_t hooks_ns = 0;        // their estimated added time
  uint64_t process_cpu_ns = 0;  // the whole process's CPU time (CLOCK_PROCESS_CPUTIME_ID)
  uint64_t wall_ns = 0;
  // (threads_cpu_ns + hooks_ns) as a share of process_cpu_ns and of wall_ns, in percent.
  double share_of_cpu_pct() const;
  double share_of_wall_pct() const;
};

// The cost so far, from the summed counters and the process's wall time. `python`: a frame
// reader is installed (the timed hooks read the caller's Python frame).
OwnCost own_cost(const CounterTotals& totals, uint64_t wall_ns, bool python);

// Forgets the threads (a forked child: its parent's threads are not in it).
void own_threads_reset();

}  // namespace cudashim::recorder
