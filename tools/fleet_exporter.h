// fleet_exporter.h: `cudashim exporter`: the node's fleet records (catalog/fleet_record.h) served
// to Prometheus as /metrics, in its text exposition format (docs/fleet.md).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "catalog/fleet_record.h"

namespace cudashim::tools {

struct ExporterOptions {
  std::string dir;                   // the runtime folder ("" : fleet.dir's auto)
  std::string listen = "0.0.0.0";    // the address to serve on
  int port = 9401;                   // dcgm-exporter has 9400; 0: any free port (printed)
  std::string textfile;              // node_exporter's textfile folder: cudashim.prom, "" none
  int keep_exited_s = 60;            // a finished process's record is served this long, then reaped
  bool once = false;                 // print the exposition on stdout once and exit
  std::string nvidia_gpus = "/proc/driver/nvidia/gpus";  // <bus id>/information: NVML's index and UUID
};

// Runs the exporter until SIGTERM or SIGINT (or once). Returns the exit status: 0, or 3 when
// the folder or the port cannot be used (one line naming it).
int run_exporter(const ExporterOptions& o);

// What the exporter knows of one record it served.
struct ServedRecord {
  FleetRecord rec;
  bool alive = false;  // its process runs (pid and start time match)
};

// Reads `name` in the folder `dirfd` as hostile: a symbolic link, not a regular file, a size
// other than the record's, another magic, another version, a bad checksum, a file owned by
// another uid than the record's, a name that does not match its pid and start, absurd values,
// a label that is not NUL-terminated. Returns true with `out` filled, else false with `why`.
bool read_fleet_record(int dirfd, const std::string& name, FleetRecord& out, std::string& why);

// The GPU behind a PCI bus id, from the driver's /proc files: NVML's index (Device Minor) and UUID.
struct GpuIdentity {
  std::string index, uuid;
};
std::map<std::string, GpuIdentity> read_gpu_identities(const std::string& nvidia_gpus);

// The Prometheus text exposition of `records`; `prefix` replaces "cudashim_" in each series'
// name (the textfile's finished jobs are "cudashim_job_").
std::string render_fleet_metrics(const std::vector<ServedRecord>& records, const std::map<std::string, GpuIdentity>& gpus,
                                 const std::string& hostname, const std::string& prefix = "cudashim_");

}  // namespace cudashim::tools
