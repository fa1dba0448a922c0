#!/usr/bin/env python3
"""sync_patterns.py [STEPS]: the quick start's example, in Python with no dependency
(ctypes on the driver API: no toolkit, no torch needed). A loop with the habits cudashim
flags: it allocates every step, copies from pageable memory, synchronizes the context
inside the loop and reads a value back every step. Run it under `cudashim run` and the
summary names each habit at its line here. Without a GPU or driver it says so and exits 0.
"""
import ctypes
import sys

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
try:
    # PyDLL: each call keeps the GIL, so the shim reads its Python line on every CPython
    # (CDLL releases the GIL; on CPython 3.10 and 3.11 the shim then sees only libffi's frame).
    cu = ctypes.PyDLL("libcuda.so.1")
except OSError as e:
    print(f"sync_patterns: no CUDA driver here ({e}); nothing for cudashim to observe")
    sys.exit(0)


def check(rc, what):
    if rc != 0:
        print(f"sync_patterns: {what} failed with CUDA error {rc}")
        sys.exit(0 if what in ("cuInit", "cuDeviceGet") else 1)


check(cu.cuInit(0), "cuInit")
dev = ctypes.c_int()
check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
ctx = ctypes.c_void_p()
check(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
n = 1 << 20
host = (ctypes.c_char * n)()          # pageable host memory
scalar = ctypes.c_float()
for step in range(steps):
    buf = ctypes.c_uint64()
    check(cu.cuMemAlloc_v2(ctypes.byref(buf), ctypes.c_size_t(n)), "cuMemAlloc")  # allocates every step
    check(cu.cuMemcpyHtoD_v2(buf, host, ctypes.c_size_t(n)), "cuMemcpyHtoD")       # from pageable memory
    check(cu.cuCtxSynchronize(), "cuCtxSynchronize")                              # a device-wide wait per step
    check(cu.cuMemcpyDtoH_v2(ctypes.byref(scalar), buf, ctypes.c_size_t(4)), "cuMemcpyDtoH")  # a scalar read back
    check(cu.cuMemFree_v2(buf), "cuMemFree")
cu.cuDevicePrimaryCtxRelease(dev)
print(f"sync_patterns: {steps} steps done")
