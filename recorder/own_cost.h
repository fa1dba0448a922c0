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

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID), ns.
uint64_t own_thread_cpu_ns();

// The flush thread's work by part (recorder/event_stream.cpp reads its thread's CPU clock
// around each tick function): what each part cost in all, how often it ran, its costliest run,
// and the wall time it took (a part that waits, NVML's calls into the driver, shows there).
// Written by the flush thread only; read by whoever writes the report.
inline constexpr int kOwnParts = 12;
struct OwnPart {
  const char* name = nullptr;  // nullptr: the part never ran
  uint64_t cpu_ns = 0, runs = 0, max_ns = 0, wall_ns = 0;
};
void own_part_add(int part, const char* name, uint64_t cpu_ns, uint64_t wall_ns);
// Copies the parts that ran into `out` (kOwnParts entries); returns how many.
int own_parts(OwnPart* out);

// One round of the flush thread (its ticks, its snapshot and its sleep of about a second):
// the thread's CPU time and the wall time of that round, and the thread's CPU time in all at
// its end. The last kOwnRounds rounds are kept.
inline constexpr int kOwnRounds = 256;
void own_round_add(uint64_t cpu_ns, uint64_t wall_ns, uint64_t flush_total_ns);

// What cudashim costs once its start-up work is done: the flush thread's median round (its
// CPU time over the round's wall time: a round that loaded NVML or read a new library is an
// outlier the median leaves out), plus its other threads' CPU time (the wait sampler) and the
// hooks' estimate, as shares of the wall time. rounds == 0: no round yet (then the flush
// thread's share is its CPU time so far over the wall time).
struct OwnSteady {
  uint64_t rounds = 0;       // rounds the median is of (the last kOwnRounds at most)
  double flush_pct = 0.0;    // the median round's CPU over its wall time, percent
  double share_of_wall_pct = 0.0;
};

struct OwnCost {
  uint64_t threads_cpu_ns = 0;  // own_threads_cpu_ns()
  uint64_t hook_calls = 0;      // hooked calls made by the program (nested ones counted once)
  uint64_t hooks_ns = 0;        // their estimated added time
  uint64_t process_cpu_ns = 0;  // the whole process's CPU time (CLOCK_PROCESS_CPUTIME_ID)
  uint64_t wall_ns = 0;
  uint64_t flush_cpu_ns = 0;    // the flush thread's CPU time at the end of its last round
  OwnSteady steady;
  // (threads_cpu_ns + hooks_ns) as a share of process_cpu_ns and of wall_ns, in percent.
  double share_of_cpu_pct() const;
  double share_of_wall_pct() const;
};

// The cost so far, from the summed counters and the process's wall time. `python`: a frame
// reader is installed (the timed hooks read the caller's Python frame).
OwnCost own_cost(const CounterTotals& totals, uint64_t wall_ns, bool python);

// Forgets the threads, the parts and the rounds (a forked child: its parent's threads are not in it).
void own_threads_reset();

}  // namespace cudashim::recorder
