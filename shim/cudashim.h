/* cudashim.h: the small C API that libcudashim.so exports besides its hooks.
 * A program may call these through dlsym(RTLD_DEFAULT, "cudashim_version") to ask
 * whether it runs under cudashim; none of them is needed for normal use. */
#ifndef CUDASHIM_H
#define CUDASHIM_H
#ifdef __cplusplus
extern "C" {
#endif

/* Returns the version string of the loaded shim, e.g. "0.1.0". Never NULL. */
const char* cudashim_version(void);

/* Writes this process's JSON report now: to `path` when non-NULL, else to the
 * default per-process file in CUDASHIM_OUT. Returns 0, or a negative errno:
 * -EEXIST when something this process did not write is at `path` (another file, a
 * link, a device, a FIFO, a folder): it is left as it is (docs/outputs.md). */
int cudashim_write_report(const char* path);

/* Returns how many times the hooked ABI symbol `abi_name` (exact, e.g.
 * "cuMemAlloc_v2") was called in this process so far; 0 for unknown names. */
unsigned long long cudashim_api_calls(const char* abi_name);

/* Turns call-site attribution (the synchronization analysis: Python and native call
 * sites, sync findings, the timeline) on (1) or off (0) from now on, in every thread;
 * -1 returns to what the policy says (sync.call_sites). Counters, the ledger and every
 * policy (caps included) keep working either way. Returns the state before the call
 * (1 on, 0 off). Meant for measuring its cost in one process, or for leaving a section
 * of a job out of the findings. */
int cudashim_set_call_sites(int on);

#ifdef __cplusplus
}
#endif
#endif
