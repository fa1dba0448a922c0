#!/usr/bin/env python3
"""fake_train_step.py LIBCUDART STEPS: a training-step loop for a machine with no GPU, through the test
double's runtime (tests/fakecuda), for bench/gpu_sampling_overhead.py --cpu. Each step does ~2 ms of
host work (the batch preparation of bench/gpu_train_step.py's loop), 20 kernel launches and a
device-to-host read-back and a device synchronize, as a real step's calls. Prints one JSON line in
gpu_train_step.py's form: the median and mean step time of the measured steps (WARMUP, default 20,
not measured)."""
import ctypes
import json
import os
import statistics
import sys
import time

rt = ctypes.CDLL(sys.argv[1])
steps = int(sys.argv[2])
warmup = int(os.environ.get("WARMUP", "20"))


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
dev = ctypes.c_void_p()
if rt.cudaMalloc(ctypes.byref(dev), 1 << 20) != 0:
    sys.exit("fake_train_step: cudaMalloc failed")
host = ctypes.create_string_buffer(4)
kernel = ctypes.cast(rt.cudaDeviceSynchronize, ctypes.c_void_p)  # any address: the double runs nothing
args = (ctypes.c_void_p * 1)()
data = list(range(20000))


def step():
    t0 = time.perf_counter()
    deadline = t0 + 0.002
    while time.perf_counter() < deadline:  # host work
        sum(data[:2000])
    for _ in range(20):
        rt.cudaLaunchKernel(kernel, Dim3(1, 1, 1), Dim3(32, 1, 1), args, 0, None)
    rt.cudaMemcpy(host, dev, 4, 2)  # cudaMemcpyDeviceToHost
    rt.cudaDeviceSynchronize()
    return time.perf_counter() - t0


times = [step() for _ in range(steps + warmup)][warmup:]
print(json.dumps({"model": "fake", "median_ms": statistics.median(times) * 1e3, "mean_ms": statistics.mean(times) * 1e3,
                  "steps": len(times), "warmup": warmup, "total_steps": steps + warmup}))
