#!/usr/bin/env python3
"""screen_job.py FAKECUDA_DIR CUDART_SONAME: a training job as a user writes it, through the
test doubles (tests/fakecuda): several CUDA libraries loaded (the runtime, cuDNN, CUPTI, the
driver), a helper command run through a shell, a probe that only loads libcuda and a forked
worker (none makes a CUDA call; the worker is a DataLoader worker that only prepares
batches), and a loop whose every step
prepares a batch on the host, copies it in and waits for the whole device: the habit
cudashim prices. tests/cli/screen.py runs it under `cudashim run`."""
import ctypes
import os
import subprocess
import sys
import time

fake, soname = sys.argv[1:3]
# PyDLL keeps the GIL during each call: the shim reads this file's line on every CPython.
rt = ctypes.PyDLL(soname)
for extra in ("cudnn/libcudnn_graph.so.9", "cupti/libcupti.so"):
    path = os.path.join(fake, extra)
    if os.path.exists(path):
        ctypes.CDLL(path)
subprocess.run(["sh", "-c", "true"], check=True)  # a helper command: no CUDA call
# A probe that only loads the driver, as a launcher or an MPI daemon does: a report, no call.
subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libcuda.so.1')"], check=True)
worker = os.fork()
if worker == 0:  # a data worker: host work only, then os._exit as multiprocessing's children leave
    time.sleep(0.2)
    os._exit(0)

dev = ctypes.c_void_p()
assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
pinned = ctypes.c_void_p()
assert rt.cudaMallocHost(ctypes.byref(pinned), ctypes.c_size_t(1 << 20)) == 0
for step in range(60):
    time.sleep(0.02)  # the host prepares the next batch
    assert rt.cudaMemcpyAsync(dev, pinned, ctypes.c_size_t(4096), 1, None) == 0
    assert rt.cudaDeviceSynchronize() == 0  # the habit: a device-wide wait every step
rt.cudaFreeHost(pinned)
rt.cudaFree(dev)
os.waitpid(worker, 0)
print("screen_job: 60 steps done")
