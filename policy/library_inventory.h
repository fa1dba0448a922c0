// library_inventory.h: the live inventory of CUDA-family libraries and device code,
// kept current while the job runs.
//
// The dlopen trampoline tail-jumps into libc and never sees a load finish; it only
// notes CUDA-family requests (recorder/library_log.h). The inventory is re-read on the
// event stream's flush thread (about once a second) when the loader's own counts of
// objects added and removed (dl_iterate_phdr's dlpi_adds/dlpi_subs) changed, and once
// more at exit. Each re-read diffs against the previous one: loads and unloads go to
// the event stream and the trace, and every finding seen for the first time comes
// back as one log line.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/findings.h"
#include "symbols/loaded_libraries.h"

namespace cudashim::policy {

struct LiveDriverFacts {
  int driver_version = 0;  // cuDriverGetVersion (12080 = CUDA 12.8), 0 when unknown
};

// A live line of the library watcher and the severity of what it says: an info finding (nothing
// to do, or nothing wrong) is logged at the info level, never as a warning.
struct LiveLine {
  Severity severity;
  std::string text;
};

// Re-reads the inventory if anything changed since the last call (always when
// `final_read`: at exit, or when the report is written); returns one log line per finding not
// reported before, a run's totals (Finding::run_total) only at a final read. Thread-safe
// (one re-read at a time); cold: allocates, walks the loaded objects.
std::vector<LiveLine> libraries_rescan(const LiveDriverFacts& facts, bool final_read);

// A library load or unload seen by a re-read, for the trace and the report.
struct LibraryEvent {
  uint64_t t_ns;  // monotonic clock (ns), as recorder/clock.h monotonic_ns()
  bool load;
  std::string path, family, version;
};
std::vector<LibraryEvent> library_events();

// The libraries and library findings of the last re-read (call libraries_rescan(..., true)
// first): the report's "libraries" and "library_findings" sections.
struct LibraryInventory {
  std::vector<symbols::LoadedLibrary> libraries;
  std::vector<Finding> findings;
  int driver_version = 0;  // cuDriverGetVersion's last answer (12090 = CUDA 12.9), 0 when never asked
};
LibraryInventory library_inventory();

// A forked child re-reads from scratch and reports its own findings.
void library_inventory_reset();

}  // namespace cudashim::policy
