// library_watch.h: the shim's side of the live library inventory (the rules and
// the report live in policy/library_inventory.*, the logs in recorder/library_log.*).
#pragma once
#include <cstdint>

#include "catalog/hooks.h"
#include "shim/cuda_abi.h"

namespace cudashim::shim {

// A module-load hook returned `result` after `dt_ticks`: notes what the image was
// (fatbin, cubin, PTX, a file), how much of it serves this GPU, and who loaded it.
// Cold path (module loads are rare); never fails the call.
void note_module_load(HookId id, const void* image, bool is_path, int result, uint64_t dt_ticks, const void* caller);

// Re-reads the inventory if the loaded set changed and logs each new finding once.
// Runs on the event stream's flush thread, and with `force` at exit.
void library_watch_tick();
void library_watch_final();

// The driver's CUDA version as the driver reported it to the program (cudart asks
// at start-up); 0 until then. The shim never asks the driver itself.
void note_driver_version(int version);
int live_driver_version();

}  // namespace cudashim::shim
