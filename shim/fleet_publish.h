// fleet_publish.h: the process's live fleet record (catalog/fleet_record.h), which
// `cudashim exporter` serves to Prometheus (docs/fleet.md). Written on the background flush
// thread (a tick of recorder/event_stream.h, about once a second, so only once the process made
// its first CUDA call) and once more at its end; never on a hook's path.
#pragma once
#include <vector>

#include "catalog/findings.h"
#include "policy/rules/gpu_time.h"
#include "policy/settings_load.h"
#include "recorder/recorder.h"

namespace cudashim::shim {

// Resolves fleet.dir (auto, off or a folder) and notes who the process is. Publishes
// nothing. Called at start-up and in a forked child (a new pid: a new record).
void fleet_configure(const policy::Settings& s, const recorder::ProcessInfo& info);

// The flush thread's tick: the counters each second, the findings and GPU time every
// few seconds. A folder that cannot be written is said once and given up.
void fleet_tick();

// The record's last state (exited), with `findings` and `gpu` when the exit path evaluated
// them, as the report shows them (nullptr: evaluated here). pre: the process made a CUDA call
// (recorder::has_activity()).
void fleet_final(const std::vector<Finding>* findings, const policy::GpuTimeResult* gpu);

}  // namespace cudashim::shim
