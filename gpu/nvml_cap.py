"""nvml_cap.py: NVML's view of the GPU from inside a job under CUDASHIM_MEM_CAP (gpu/run_nvml.sh).
Prints one JSON line: torch.cuda.mem_get_info, and nvmlDeviceGetMemoryInfo / _v2 through
ctypes (dlopen + dlsym, as pynvml does), after torch allocated 1 GiB."""
import ctypes
import json

import torch

x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
free, total = torch.cuda.mem_get_info()


class Mem(ctypes.Structure):
    _fields_ = [("total", ctypes.c_ulonglong), ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


class MemV2(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("total", ctypes.c_ulonglong), ("reserved", ctypes.c_ulonglong),
                ("free", ctypes.c_ulonglong), ("used", ctypes.c_ulonglong)]


ml = ctypes.CDLL("libnvidia-ml.so.1")
assert ml.nvmlInit_v2() == 0
dev = ctypes.c_void_p()
assert ml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(dev)) == 0
m = Mem()
r1 = ml.nvmlDeviceGetMemoryInfo(dev, ctypes.byref(m))
m2 = MemV2()
m2.version = (2 << 24) | ctypes.sizeof(MemV2)
r2 = ml.nvmlDeviceGetMemoryInfo_v2(dev, ctypes.byref(m2))
G = 2**30
print(json.dumps({"torch_mem_get_info_gib": [round(free / G, 3), round(total / G, 3)],
                  "nvml_v1_gib": [r1, round(m.total / G, 3), round(m.free / G, 3), round(m.used / G, 3)],
                  "nvml_v2_gib": [r2, round(m2.total / G, 3), round(m2.reserved / G, 3), round(m2.free / G, 3), round(m2.used / G, 3)]}))
