#!/usr/bin/env python3
"""nvml_call_cost.py [CALLS]: what one tick of cudashim's GPU sampler (shim/gpu_sampler.cpp) costs in
NVML calls, measured on this host's libnvidia-ml.so.1 (the NVML double on a CPU machine, through
LD_LIBRARY_PATH), with no shim. Prints one JSON line: ns per call of each NVML function the sampler
calls on each tick, the tick's calls per device (as gpu_sampler_tick makes them: read_utilization,
read_health) and their summed cost per device, and the once-per-tick event poll (read_events). Each figure is the median of 15 batches
of CALLS calls through ctypes (fewer for a call slower than 10 us: a batch lasts about 20 ms at most), less the median of the same batches of a libc call that does nothing
(labs): what ctypes itself adds."""
import ctypes
import json
import statistics
import sys
import time

CALLS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000

nvml = ctypes.CDLL("libnvidia-ml.so.1")
libc = ctypes.CDLL(None)
if nvml.nvmlInit_v2() != 0:
    sys.exit("nvml_call_cost: nvmlInit_v2 failed")
dev = ctypes.c_void_p()
if nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) != 0:
    sys.exit("nvml_call_cost: nvmlDeviceGetHandleByIndex_v2(0) failed")
u32, u64, typ, n = ctypes.c_uint(), ctypes.c_ulonglong(), ctypes.c_int(), ctypes.c_uint()
buf = ctypes.create_string_buffer(256 * 64)  # 256 samples of either kind, with room to spare
evset = ctypes.c_void_p()
have_events = hasattr(nvml, "nvmlEventSetCreate") and nvml.nvmlEventSetCreate(ctypes.byref(evset)) == 0
reasons = "nvmlDeviceGetCurrentClocksEventReasons"
if not hasattr(nvml, reasons):
    reasons = "nvmlDeviceGetCurrentClocksThrottleReasons"
last_us = ctypes.c_ulonglong(0)


def samples_count():
    n.value = 0
    return nvml.nvmlDeviceGetSamples(dev, 1, last_us, ctypes.byref(typ), ctypes.byref(n), None)


def samples_read():
    n.value = 256
    return nvml.nvmlDeviceGetSamples(dev, 1, last_us, ctypes.byref(typ), ctypes.byref(n), buf)


def process_util():
    n.value = 256
    return nvml.nvmlDeviceGetProcessUtilization(dev, buf, ctypes.byref(n), last_us)


# name -> (callable, calls per tick and device)
CALLS_PER_TICK = {
    "nvmlDeviceGetSamples (count)": (samples_count, 1),
    "nvmlDeviceGetSamples (read)": (samples_read, 1),
    "nvmlDeviceGetProcessUtilization": (process_util, 1),
    "nvmlDeviceGetClockInfo": (lambda: nvml.nvmlDeviceGetClockInfo(dev, 1, ctypes.byref(u32)), 2),
    reasons: (lambda: getattr(nvml, reasons)(dev, ctypes.byref(u64)), 1),
    "nvmlDeviceGetTemperature": (lambda: nvml.nvmlDeviceGetTemperature(dev, 0, ctypes.byref(u32)), 1),
    "nvmlDeviceGetPowerUsage": (lambda: nvml.nvmlDeviceGetPowerUsage(dev, ctypes.byref(u32)), 1),
    "nvmlDeviceGetEnforcedPowerLimit": (lambda: nvml.nvmlDeviceGetEnforcedPowerLimit(dev, ctypes.byref(u32)), 1),
    "nvmlDeviceGetMemoryInfo": (lambda: nvml.nvmlDeviceGetMemoryInfo(dev, buf), 1),
    "nvmlDeviceGetUtilizationRates": (lambda: nvml.nvmlDeviceGetUtilizationRates(dev, buf), 1),
}
if have_events:  # once per tick, not per device: counted with the first device
    CALLS_PER_TICK["nvmlEventSetWait_v2 (timeout 0)"] = (lambda: nvml.nvmlEventSetWait_v2(evset, buf, 0), 1)


BATCH_NS = 20_000_000  # a batch's length at most, about: a real device's NVML answers some calls in a millisecond


def per_call_ns(fn):
    t0 = time.perf_counter_ns()
    for _ in range(10):
        fn()
    probe = max(1.0, (time.perf_counter_ns() - t0) / 10)
    calls = max(5, min(CALLS, int(BATCH_NS / probe)))  # 2000 calls of 1 ms, 15 times, took the H200 run past its limit
    batches = []
    for _ in range(15):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        batches.append((time.perf_counter_ns() - t0) / calls)
    return statistics.median(batches)


for fn, _ in CALLS_PER_TICK.values():  # warm: first calls of a driver library are slower
    fn()
ctypes_ns = per_call_ns(lambda: libc.labs(1))
costs = {name: max(0.0, per_call_ns(fn) - ctypes_ns) for name, (fn, _) in CALLS_PER_TICK.items()}
EVENT = "nvmlEventSetWait_v2 (timeout 0)"
tick_ns = sum(costs[name] * k for name, (_, k) in CALLS_PER_TICK.items() if name != EVENT)
print(json.dumps({"calls_per_batch": CALLS, "ctypes_ns": round(ctypes_ns, 1),
                  "per_call_ns": {k: round(v, 1) for k, v in costs.items()},
                  "calls_per_tick_per_device": {k: c for k, (_, c) in CALLS_PER_TICK.items()},
                  "tick_ns_per_device": round(tick_ns, 1), "tick_ns_once": round(costs.get(EVENT, 0.0), 1)}))
