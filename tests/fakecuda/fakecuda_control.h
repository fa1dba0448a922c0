/* Control API of the fake CUDA driver (tests/fakecuda, built as libcuda.so.1).
 *
 * The fake driver stands in for the real libcuda.so.1 in tests and benchmarks: host memory plays
 * device memory, kernels do not run, every exported driver entry point counts its own calls.
 *
 * Environment read when the library loads:
 *   FAKECUDA_DEVICE_COUNT    number of devices                       (default 1)
 *   FAKECUDA_TOTAL_MEM       bytes of memory per device              (default 17179869184 = 16 GiB)
 *   FAKECUDA_DRIVER_VERSION  what cuDriverGetVersion reports         (default 13000)
 *   FAKECUDA_SYNC_DELAY_US   initial delay of synchronizing calls    (default 0)
 *   FAKECUDA_FAIL_SYNC_WITH  a CUresult every synchronizing call returns (default: none)
 *   FAKECUDA_KERNEL_US       how long every launched kernel runs     (default 0: kernels end at once)
 *
 * Programs that dlopen the driver resolve these with dlsym; the typedefs below name their types.
 */
#ifndef CUDASHIM_TESTS_FAKECUDA_CONTROL_H
#define CUDASHIM_TESTS_FAKECUDA_CONTROL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every synchronizing call (cuCtxSynchronize*, cuStreamSynchronize*, cuEventSynchronize, synchronous
 * cuMemcpy and cuMemset variants, cuMemFree*, cuMemFreeHost) sleeps `ns` nanoseconds from now on. */
void fakecuda_set_sync_delay_ns(uint64_t ns);

/* How many times the double's own entry point named exactly `exact_abi_name` (e.g. "cuMemAlloc_v2",
 * "cuStreamSynchronize_ptsz") ran since load or the last reset; 0 for a name the double does not export. */
uint64_t fakecuda_call_count(const char* exact_abi_name);

/* Sets every call count to 0. */
void fakecuda_reset_counts(void);

/* The double's own function for the entry point named exactly `exact_abi_name`, bypassing any
 * preloaded interposer (benchmarks compare it with the interposer's wrapper); NULL for a name the
 * double does not export. */
void* fakecuda_entry_point(const char* exact_abi_name);

/* Every kernel launched from now on runs `ns` nanoseconds on its stream's timeline (0: kernels end at
 * once). Non-blocking streams have their own timeline; the legacy stream, the per-thread default streams
 * and blocking streams share one. Events recorded on a stream complete when its timeline's last kernel
 * ends (cuEventQuery answers CUDA_ERROR_NOT_READY before); stream, event and context synchronization,
 * and cuMemFree*, wait for it. A kernel named "fakecuda_writer" (any module) with kernelParams
 * {CUdeviceptr*, size_t*, unsigned char*} keeps storing that byte over that many bytes of that buffer
 * until it ends, as a real kernel writes device memory. */
void fakecuda_set_kernel_ns(uint64_t ns);
// Copies the [start, end) steady-clock times of the kernels that took time, from the from-th
// on, up to cap of them; returns how many (tests/fakecuda/fakecupti.cpp reads them).
uint64_t fakecuda_kernel_runs(uint64_t from, int64_t* starts, int64_t* ends, uint64_t cap);

/* Nanoseconds until the last running "fakecuda_writer" kernel whose buffer contains `p` ends; 0 when no
 * kernel writes there. */
uint64_t fakecuda_pending_write_ns(uint64_t p);

/* ---- the NVML double (libnvidia-ml.so.1 in the same folder; resolve these with dlsym on it).
 * Environment read when it loads: FAKENVML_UTIL_PCT (device utilization, default 0),
 * FAKENVML_PROCESS_PCT (this process's share, default the same), FAKENVML_CLOCK_EVENT_REASONS
 * (nvmlClocksEventReason bits, default 0), FAKENVML_SAMPLE_US (sample period, default 166667),
 * FAKENVML_PCIE_TX_KBPS and FAKENVML_PCIE_RX_KBPS (PCIe throughput, KB/s, default 0).
 * Utilization samples are stamped once per period since load; each reports the state in effect
 * at its stamp. */

/* From now on device `device` is busy `gpu_pct` percent of each sample period, `process_pct` of
 * it this process's. */
void fakenvml_set_utilization(unsigned device, unsigned gpu_pct, unsigned process_pct);

/* From now on the device's SM and memory clocks and its clock-event (throttle) reasons. */
void fakenvml_set_clocks(unsigned device, unsigned sm_mhz, unsigned mem_mhz, unsigned long long reasons);

/* From now on nvmlDeviceGetPcieThroughput answers `tx_kbps` (TX, device to host) and `rx_kbps` (RX). */
void fakenvml_set_pcie(unsigned device, unsigned tx_kbps, unsigned rx_kbps);

/* Queues a critical event (0x8 Xid, with the Xid number as `data`; 0x2 double-bit ECC) that the next
 * nvmlEventSetWait_v2 on a set registered for its type returns. */
void fakenvml_raise_event(unsigned device, unsigned long long type, unsigned long long data);

/* How many times the double's NVML function `name` ran (nvmlInit_v2, nvmlDeviceGetSamples,
 * nvmlDeviceGetProcessUtilization, nvmlDeviceGetClockInfo, nvmlDeviceGetCurrentClocksEventReasons,
 * nvmlEventSetWait_v2, nvmlDeviceGetUtilizationRates, nvmlDeviceGetPowerUsage,
 * nvmlDeviceGetPcieThroughput); "off_flush_thread": how
 * many of those calls came from a thread not named "cudashim-flush"; 0 for another name. */
uint64_t fakenvml_call_count(const char* name);

typedef void (*fakenvml_set_utilization_fn)(unsigned, unsigned, unsigned);
typedef void (*fakenvml_set_clocks_fn)(unsigned, unsigned, unsigned, unsigned long long);
typedef void (*fakenvml_set_pcie_fn)(unsigned, unsigned, unsigned);
typedef void (*fakenvml_raise_event_fn)(unsigned, unsigned long long, unsigned long long);
typedef uint64_t (*fakenvml_call_count_fn)(const char*);

typedef void (*fakecuda_set_kernel_ns_fn)(uint64_t ns);
typedef uint64_t (*fakecuda_kernel_runs_fn)(uint64_t from, int64_t* starts, int64_t* ends, uint64_t cap);
typedef uint64_t (*fakecuda_pending_write_ns_fn)(uint64_t p);
typedef void (*fakecuda_set_sync_delay_ns_fn)(uint64_t ns);
typedef uint64_t (*fakecuda_call_count_fn)(const char* exact_abi_name);
typedef void (*fakecuda_reset_counts_fn)(void);
typedef void* (*fakecuda_entry_point_fn)(const char* exact_abi_name);

#ifdef __cplusplus
}
#endif

#endif /* CUDASHIM_TESTS_FAKECUDA_CONTROL_H */
