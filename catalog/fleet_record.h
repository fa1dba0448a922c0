// catalog/fleet_record.h: the fleet record, one small fixed-size file per process that made a
// CUDA call, in the node's runtime folder (docs/fleet.md): written by the preload library's
// background thread (shim/fleet_publish.cpp), read by `cudashim exporter`
// (tools/fleet_exporter.cpp). Plain data, the same on every architecture we build for
// (little-endian, 64-bit); no pointer, no padding the compiler could choose differently.
//
// The file is <dir>/<pid>-<start>.rec (`start`: field 22 of /proc/<pid>/stat, so that a reused
// pid is a different file), replaced whole by rename(2): a reader sees one complete record or
// the previous one, never a mix. `checksum` (FNV-1a of every byte before it) catches what
// rename cannot: a file cut short, edited, or written by something else.
#pragma once
#include <cstddef>
#include <cstdint>

namespace cudashim {

inline constexpr char kFleetMagic[8] = {'C', 'S', 'H', 'F', 'L', 'E', 'E', 'T'};
// Bumped by any change of the layout below other than a row appended to fleet_record.def
// within the reserved room; a reader skips a newer version with one line naming it.
inline constexpr uint32_t kFleetVersion = 1;
inline constexpr int kFleetMaxValues = 32;    // room for fleet_record.def's process rows
inline constexpr int kFleetMaxDeviceValues = 8;
inline constexpr int kFleetMaxDevices = 8;
inline constexpr int kFleetMaxFindings = 24;
// A stored value at or above this is absurd (2^60 ns is 36 years; 2^60 bytes an exbibyte):
// the reader refuses the record rather than serve it.
inline constexpr uint64_t kFleetAbsurd = uint64_t{1} << 60;

enum class FleetValue : uint32_t {
#define CUDASHIM_FLEET_VALUE(ENUM, KIND, METRIC, SCALE, HELP) ENUM,
#define CUDASHIM_FLEET_DEVICE_VALUE(ENUM, KIND, METRIC, SCALE, HELP)
#include "catalog/fleet_record.def"
#undef CUDASHIM_FLEET_VALUE
#undef CUDASHIM_FLEET_DEVICE_VALUE
  kCount
};
enum class FleetDeviceValue : uint32_t {
#define CUDASHIM_FLEET_VALUE(ENUM, KIND, METRIC, SCALE, HELP)
#define CUDASHIM_FLEET_DEVICE_VALUE(ENUM, KIND, METRIC, SCALE, HELP) ENUM,
#include "catalog/fleet_record.def"
#undef CUDASHIM_FLEET_VALUE
#undef CUDASHIM_FLEET_DEVICE_VALUE
  kCount
};
inline constexpr size_t kFleetValueCount = static_cast<size_t>(FleetValue::kCount);
inline constexpr size_t kFleetDeviceValueCount = static_cast<size_t>(FleetDeviceValue::kCount);
static_assert(kFleetValueCount <= kFleetMaxValues && kFleetDeviceValueCount <= kFleetMaxDeviceValues);

struct FleetMetric {
  const char* metric;  // the series' name
  bool counter;        // else a gauge
  double scale;        // served value = stored / scale
  const char* help;
};
inline constexpr FleetMetric kFleetValues[kFleetValueCount] = {
#define CUDASHIM_FLEET_VALUE(ENUM, KIND, METRIC, SCALE, HELP) {METRIC, #KIND[0] == 'c', SCALE, HELP},
#define CUDASHIM_FLEET_DEVICE_VALUE(ENUM, KIND, METRIC, SCALE, HELP)
#include "catalog/fleet_record.def"
#undef CUDASHIM_FLEET_VALUE
#undef CUDASHIM_FLEET_DEVICE_VALUE
};
inline constexpr FleetMetric kFleetDeviceValues[kFleetDeviceValueCount] = {
#define CUDASHIM_FLEET_VALUE(ENUM, KIND, METRIC, SCALE, HELP)
#define CUDASHIM_FLEET_DEVICE_VALUE(ENUM, KIND, METRIC, SCALE, HELP) {METRIC, #KIND[0] == 'c', SCALE, HELP},
#include "catalog/fleet_record.def"
#undef CUDASHIM_FLEET_VALUE
#undef CUDASHIM_FLEET_DEVICE_VALUE
};

enum class FleetState : uint32_t { running = 1, exited = 2 };

// One GPU the process used: its memory and, once NVML (or CUPTI) had enough samples, its
// busy share and the diagnosis of the idle rest (policy/rules/gpu_time.h).
struct FleetDevice {
  int32_t ordinal;          // CUDA ordinal in the process (under its CUDA_VISIBLE_DEVICES)
  uint32_t has_share;       // 1: busy_ppm, idle_ppm and diagnosis are set
  char pci_bus_id[16];      // "0000:18:00.0": the exporter maps it to NVML's index and UUID
  char name[48];            // "NVIDIA H200"
  char diagnosis[16];       // "gpu-bound", "sync-bound", "host-bound", "launch-bound", "unknown"
  uint64_t values[kFleetMaxDeviceValues];
};

// One finding of the process (runtime, library and GPU alike), with its cost so far.
struct FleetFinding {
  char id[48];        // "sync.scalar-readback"
  char severity[8];   // "info", "warning", "error"
  uint64_t count;     // calls it counted (0 for a process-wide library finding)
  uint64_t blocked_ns;
};

struct FleetRecord {
  char magic[8];          // kFleetMagic
  uint32_t version;       // kFleetVersion
  uint32_t size;          // sizeof(FleetRecord)
  uint32_t state;         // FleetState
  int32_t pid;
  uint32_t uid;           // getuid(): must own the file and the process
  int32_t rank;           // RANK, LOCAL_RANK or SLURM_PROCID; -1 none
  uint64_t start_ticks;   // /proc/<pid>/stat field 22
  uint64_t seq;           // 1, 2, ...: each publish
  uint64_t written_unix_ns;
  // Who the process is, read by the process itself when it first publishes (an exporter
  // may not read another user's /proc/<pid>/environ).
  char exe[64];           // the executable's file name
  char slurm_job_id[32];  // SLURM_JOB_ID
  char slurm_step[32];    // SLURM_STEP_ID
  char pod[128];          // POD_NAME, else HOSTNAME inside a kubepods cgroup
  char pod_namespace[64]; // POD_NAMESPACE, else the service account's namespace file
  char container[128];    // CONTAINER_NAME, else the container id of the cgroup
  char pod_uid[48];       // the pod's uid from the cgroup path
  uint32_t device_count;  // <= kFleetMaxDevices
  uint32_t finding_count; // <= kFleetMaxFindings
  uint64_t values[kFleetMaxValues];
  FleetDevice devices[kFleetMaxDevices];
  FleetFinding findings[kFleetMaxFindings];
  uint64_t checksum;      // fleet_checksum of every byte before it
};
static_assert(sizeof(FleetRecord) % 8 == 0 && offsetof(FleetRecord, checksum) == sizeof(FleetRecord) - 8);

// FNV-1a (64 bit) of the record's bytes before `checksum`.
inline uint64_t fleet_checksum(const FleetRecord& r) {
  const auto* p = reinterpret_cast<const unsigned char*>(&r);
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < offsetof(FleetRecord, checksum); ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace cudashim
