"""cudart_probe.py LIBCUDART HOOK_NAMES: NVIDIA's libcudart (loaded with ctypes, so no
binary built on the build machine runs here) against the test-double driver. Prints one
JSON line: the runtime version and the double's own count of each hooked driver ABI that
cudart reached (the ground truth the shim's report must equal), and which
libcudashim.so is mapped. Runs on the old
userland's own Python."""
import ctypes
import json
import os
import sys

rt = ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW | os.RTLD_LOCAL)
version = ctypes.c_int(0)
count = ctypes.c_int(-1)
rt.cudaRuntimeGetVersion(ctypes.byref(version))
err = rt.cudaGetDeviceCount(ctypes.byref(count))  # the double stops real cudart at cuGetExportTable
drv = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD)
drv.fakecuda_call_count.restype = ctypes.c_uint64
drv.fakecuda_call_count.argtypes = [ctypes.c_char_p]
truth = {}
with open(sys.argv[2]) as f:
    for name in (l.strip() for l in f):
        if name.startswith("cu") and not name.startswith("cuda"):
            n = drv.fakecuda_call_count(name.encode())
            if n:
                truth[name] = n
with open("/proc/self/maps") as f:
    shims = sorted({l.split()[-1] for l in f if l.rstrip().endswith("libcudashim.so")})
print(json.dumps({"runtime_version": version.value, "cudaGetDeviceCount": err, "truth": truth, "shim": shims}))
