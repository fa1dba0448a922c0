"""site_cost.py: ns per call of a hooked call-site row (cuMemsetD8Async) minus an unhooked call
(cuCtxGetDevice), both through ctypes, against the test-double driver; run under the shim with
CUDASHIM_SITES=0 and =1 (gpu/run_costmodel.sh), the difference is what attributing a call to its
call site (native return address and the Python line) costs in a Python process."""
import ctypes, time, sys, statistics
cu = ctypes.CDLL("libcuda.so.1")
cu.cuInit(0)
dev = ctypes.c_int(); cu.cuDeviceGet(ctypes.byref(dev), 0)
ctx = ctypes.c_void_p(); cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev); cu.cuCtxSetCurrent(ctx)
ptr = ctypes.c_uint64(); cu.cuMemAlloc_v2(ctypes.byref(ptr), 1 << 20)
f = cu.cuMemsetD8Async
f.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
g = cu.cuCtxGetDevice  # not hooked: the ctypes call alone
N = 200000
def loop(fn, args):
    t = time.perf_counter()
    for _ in range(N): fn(*args)
    return (time.perf_counter() - t) / N * 1e9
res = []
d = ctypes.c_int()
for r in range(7):
    a = loop(f, (ptr.value, 0, 64, None)); b = loop(g, (ctypes.byref(d),))
    res.append(a - b)
print(f"{statistics.median(res):.0f}")
