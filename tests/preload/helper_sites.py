#!/usr/bin/env python3
"""helper_sites.py: a sync made inside a helper package is the user's line's; a compile burst is no loop.

Issue 33, item 2. Stand-in packages are installed in a temporary site-packages folder on
sys.path, reaching the runtime test double through ctypes (PyDLL: the GIL stays held):
  - `torch`, an array library (catalog/python_packages.def), with `torch.launch` (a kernel
    launch) and `torch.compiled_step`, a stand-in for a torch.compile'd function: its first
    call "compiles" inside torch/_inductor/select_algorithm.py, autotuning with 20 timed runs
    (a launch and a stream sync each, 2 ms apart: 20 visits spread over the first steps);
    later calls only launch;
  - `torch.nn.modules.conv._conv_forward`, a stand-in for a convolution under
    torch.backends.cudnn.benchmark: its first call at each new shape autotunes (20 timed
    trials, a launch and a stream sync each, 2 ms apart), later calls only launch; reached
    through `vision`, a model package (as torchvision's resnet is), from LINE-CONV, whose
    shape changes every 10 steps (three shapes: bursts at steps 0, 10 and 20);
  - `metrics`, a helper package in no row of the catalog (a metrics library, a team's own
    installed package), whose `compute` reads a scalar back and synchronizes, two frames
    deep inside the package.
The child runs 30 steps, 5 ms apart: `torch.compiled_step()` at LINE-COMPILED and
`metrics.compute()` at LINE-USER. The report must show:
  1. sync.scalar-readback as a warning (no framework) at the user's line LINE-USER, its
     site naming the helper's function that made the call, the innermost frame
     ("metrics/__init__.py:N (_to_float), inside metrics, reached from your line
     helper_sites.py:LINE-USER"), 30 steps, and the exit summary's warning saying so;
  2. no finding at LINE-COMPILED: the autotuning's 20 syncs are a compile burst, not a loop,
     though they have more visits than sync.warmup_hits and spread over the loop's first steps;
  3. no finding at LINE-CONV: cuDNN's autotuning bursts are warm-up, though they spread over
     two thirds of the loop (H200, gpu/realworld/cudnn_benchmark.py: reported as
     sync.explicit-in-loop "inside torchvision, reached from your line" before).
Nothing here is timed: the sleeps only spread the visits.
usage: helper_sites.py SHIM FAKECUDA_DIR CUDART_PATH
"""
import ctypes
import glob
import json
import os
import subprocess
import sys
import tempfile
import time

from preload_support import line_of

TORCH_INIT = '''
import ctypes

_rt = None
_compiled = False


class Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]


def init(path):
    global _rt
    _rt = ctypes.PyDLL(path)
    _rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]


def runtime():
    return _rt


def launch():
    kernel = ctypes.cast(_rt.cudaLaunchKernel, ctypes.c_void_p)  # any address: the double runs nothing
    _rt.cudaLaunchKernel(kernel, Dim3(1, 1, 1), Dim3(32, 1, 1), None, 0, None)


def compiled_step():
    global _compiled
    if not _compiled:
        from torch._inductor import select_algorithm
        select_algorithm.autotune(20)
        _compiled = True
    launch()
'''

SELECT_ALGORITHM = '''
import time

import torch


def _benchmark_choice():
    torch.launch()
    torch.runtime().cudaStreamSynchronize(None)


def autotune(n):
    for _ in range(n):
        time.sleep(0.002)
        _benchmark_choice()
'''

CONV = '''
import time

import torch

_tuned = set()


def _conv_forward(shape):
    if shape not in _tuned:  # cudnn.benchmark: timed trials of each algorithm at a new shape
        for _ in range(20):
            time.sleep(0.002)
            torch.launch()
            torch.runtime().cudaStreamSynchronize(None)
        _tuned.add(shape)
    torch.launch()
'''

VISION = '''
from torch.nn.modules import conv


def resnet(shape):
    return conv._conv_forward(shape)
'''

METRICS = '''
import ctypes

import torch


def _to_float(out, dev):
    rt = torch.runtime()
    rt.cudaMemcpy(out, dev, ctypes.c_size_t(4), 2)
    rt.cudaStreamSynchronize(None)
    return 0.0


def compute(out, dev):
    return _to_float(out, dev)
'''


def child(cudart):
    import metrics
    import torch
    import vision
    torch.init(cudart)
    rt = torch.runtime()
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    out = ctypes.create_string_buffer(4)
    for i in range(30):
        time.sleep(0.005)  # a step's own work: a loop takes time (sync.loop_share)
        torch.compiled_step()  # LINE-COMPILED
        vision.resnet((i // 10) % 3)  # LINE-CONV
        metrics.compute(out, dev)  # LINE-USER


def install(site):
    files = {os.path.join("torch", "__init__.py"): TORCH_INIT,
             os.path.join("torch", "_inductor", "__init__.py"): "",
             os.path.join("torch", "_inductor", "select_algorithm.py"): SELECT_ALGORITHM,
             os.path.join("torch", "nn", "__init__.py"): "",
             os.path.join("torch", "nn", "modules", "__init__.py"): "",
             os.path.join("torch", "nn", "modules", "conv.py"): CONV,
             os.path.join("vision", "__init__.py"): VISION,
             os.path.join("metrics", "__init__.py"): METRICS}
    for rel, text in files.items():
        os.makedirs(os.path.join(site, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(site, rel), "w") as f:
            f.write(text)


def check(rep, stderr):
    errors = []
    base = os.path.basename(__file__)
    user = f"{base}:{line_of(__file__, 'LINE-USER')} "
    compiled = f"{base}:{line_of(__file__, 'LINE-COMPILED')} "
    conv = f"{base}:{line_of(__file__, 'LINE-CONV')} "
    rb = [f for f in rep["findings"] if f["id"] == "sync.scalar-readback"]
    mine = [(f, s) for f in rb for s in f["sites"] if f"reached from your line " in s["where"] and
            os.path.basename(s["where"].split("reached from your line ")[-1]).startswith(user)]
    everything = [(f["id"], f["severity"], f.get("framework"), [s["where"] for s in f["sites"]]) for f in rep["findings"]]
    if not mine:
        errors.append(f"no sync.scalar-readback reached from the user's line {user.strip()}: {everything}")
    else:
        f, s = mine[0]
        if f["severity"] != "warning" or f.get("framework") is not None or s.get("framework") is not None:
            errors.append(f"the helper's read-back is {f['severity']}, framework {f.get('framework')!r}: not the user's warning")
        if "metrics/__init__.py:" not in s["where"] or "(_to_float), inside metrics, reached from your line" not in s["where"]:
            errors.append(f"the site does not name the helper's function: {s['where']!r}")
        if s.get("steps") != 30:
            errors.append(f"the helper's site has {s.get('steps')} steps, not the loop's 30")
    if "warning: findings for pid" not in stderr or not any(
            "sync.scalar-readback" in line and "(_to_float), inside metrics, reached from your line" in line and
            user.strip() in line for line in stderr.splitlines()):
        errors.append(f"the exit summary does not warn at {user.strip()} with the helper named: {stderr[-1500:]}")
    at_compiled = [(f["id"], s["where"]) for f in rep["findings"] for s in f["sites"]
                   if compiled.strip() in s["where"]]
    if at_compiled:
        errors.append(f"the compile burst is reported as a loop: {at_compiled}")
    at_conv = [(f["id"], f["severity"], s["where"]) for f in rep["findings"] for s in f["sites"] if conv.strip() in s["where"]]
    if at_conv:
        errors.append(f"cuDNN's autotuning bursts are reported as a loop: {at_conv}")
    return errors


def main():
    shim, fake, cudart = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        site = os.path.join(tmp, "lib", "python3.99", "site-packages")
        install(site)
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, PYTHONPATH=site)
            env.pop("CUDASHIM_LOG_LEVEL", None)
            env.pop("CUDASHIM_SUMMARY", None)
            p = subprocess.run([sys.executable, __file__, "--child", cudart], env=env, capture_output=True, text=True,
                               timeout=120)
            if p.returncode != 0:
                print(f"FAIL: child exited {p.returncode}: {p.stderr[-1500:]}")
                return 1
            reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
            if len(reps) != 1:
                print(f"FAIL: {len(reps)} reports")
                return 1
            print("; ".join(f"{f['id']} {f['severity']} {f.get('framework')} steps {f.get('steps')} at "
                            f"{[s['where'] for s in f['sites']]}" for f in reps[0]["findings"]))
            errors = check(reps[0], p.stderr)
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2])
        sys.exit(0)
    sys.exit(main())
