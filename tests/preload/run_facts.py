#!/usr/bin/env python3
"""run_facts.py SHIM FAKECUDA_DIR CLI: the report names the run's machine (issue 21.3: the page's
metadata): the GPUs (devices[]), the kernel module's release (driver.kernel_module) and the
frameworks the process loaded (frameworks[]), and matches docs/report-schema.md.

The job: Python through ctypes, cuInit then exit at once (before the background thread's
second tick: the report itself asks the driver then). A stand-in site-packages holds torch
(dist-info METADATA, torch/version.py, torch/lib/libtorch_stub.so, which the job loads) and
CuPy (dist-info only, never loaded: it must not be named). A version file in the open kernel
module's format stands in for /proc/driver/nvidia/version.
  1. devices[0] is the fake driver's device: name, PCI address, compute capability 9.0;
  2. driver.kernel_module is 580.95.05, kernel_module_open true;
  3. frameworks is exactly torch 2.11.0+cu130 built for CUDA 13.0 in the stand-in folder;
  4. with the version file absent, kernel_module is null, and a job that loads no framework
     library has frameworks [].
  5. `cudashim report` prints them in the summary's header, and the HTML page's "What ran"
     table has the GPU's name, the kernel module and torch's version.
Before: the report had none of these members (the summary and page could not show them).
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

shim, fake, cli = sys.argv[1:4]
here = os.path.dirname(os.path.abspath(__file__))
schema = os.path.join(here, "..", "..", "docs", "report-schema.md")
errors = []
JOB = r"""
import ctypes, sys
if len(sys.argv) > 1:
    ctypes.CDLL(sys.argv[1])
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
"""


def stub_library(dest):
    """A real shared object to load under torch/lib: one of Python's own extension modules."""
    dyn = sysconfig.get_config_var("DESTSHARED") or ""
    for cand in sorted(glob.glob(os.path.join(dyn, "*.so"))) + sorted(glob.glob("/usr/lib/python3*/lib-dynload/*.so")):
        if "math" in os.path.basename(cand) or "_json" in os.path.basename(cand):
            shutil.copy(cand, dest)
            return True
    return False


def run(d, name, args, **extra):
    out = os.path.join(d, name)
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error", **extra)
    p = subprocess.run([sys.executable, "-c", JOB] + args, env=env, capture_output=True, text=True, timeout=60)
    reports = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    if p.returncode != 0 or len(reports) != 1:
        errors.append(f"{name}: exit {p.returncode}, reports {reports}: {p.stderr[-600:]}")
        return None
    chk = subprocess.run([sys.executable, os.path.join(here, "..", "hygiene", "check_report_schema.py"), schema, reports[0]],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        errors.append(f"{name}: the report does not match the schema: {chk.stdout[-800:]}")
    return json.load(open(reports[0]))


with tempfile.TemporaryDirectory() as d:
    sp = os.path.join(d, "venv", "lib", "python3.12", "site-packages")
    os.makedirs(os.path.join(sp, "torch", "lib"))
    os.makedirs(os.path.join(sp, "torch-2.11.0+cu130.dist-info"))
    os.makedirs(os.path.join(sp, "cupy_cuda12x-13.6.0.dist-info"))
    open(os.path.join(sp, "torch-2.11.0+cu130.dist-info", "METADATA"), "w").write("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n")
    open(os.path.join(sp, "cupy_cuda12x-13.6.0.dist-info", "METADATA"), "w").write("Metadata-Version: 2.1\nName: cupy-cuda12x\nVersion: 13.6.0\n")
    open(os.path.join(sp, "torch", "version.py"), "w").write("__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n")
    lib = os.path.join(sp, "torch", "lib", "libtorch_stub.so")
    if not stub_library(lib):
        print("SKIP: no Python extension module to stand in for a torch library")
        sys.exit(77)
    vfile = os.path.join(d, "nvidia-version")
    open(vfile, "w").write("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  (dvs-builder@U16-A24-23-2)\n"
                           "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n")
    r = run(d, "torch", [lib], CUDASHIM_DRIVER_VERSION_FILE=vfile)
    if r:
        dev = r.get("devices")
        want = {"device": 0, "name": "cudashim fake device", "pci_bus_id": "0000:10:00.0", "compute_capability": "9.0"}
        if not dev or dev[0] != want:
            errors.append(f"1. devices = {dev}, expected [{want}, ...]")
        drv = r.get("driver", {})
        if drv.get("kernel_module") != "580.95.05" or drv.get("kernel_module_open") is not True:
            errors.append(f"2. driver = {drv}, expected kernel_module 580.95.05 (open)")
        fw = r.get("frameworks")
        want_fw = [{"name": "torch", "version": "2.11.0+cu130", "cuda": "13.0", "site_packages": sp}]
        if fw != want_fw:
            errors.append(f"3. frameworks = {fw}, expected {want_fw}")
        print(f"devices {dev}; kernel_module {drv.get('kernel_module')}; frameworks {fw}")
        rep = glob.glob(os.path.join(d, "torch", "cudashim-*.json"))
        summ = subprocess.run([cli, "report", *rep], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"))
        head = [l for l in summ.stdout.splitlines() if "GPUs" in l or "driver" in l]
        want_line = "  GPUs 0 cudashim fake device (sm 9.0); torch 2.11.0+cu130 (built for CUDA 13.0)"
        if want_line not in summ.stdout.splitlines() or "driver 580.95.05" not in summ.stdout:
            errors.append(f"5. the summary's header lacks the GPU, driver or torch: {head} (exit {summ.returncode})")
        html = os.path.join(d, "page.html")
        pg = subprocess.run([cli, "report", "--html", html, *rep], capture_output=True, text=True)
        page = open(html).read() if os.path.exists(html) else ""
        for want in ('<span class="gpu-name">0 cudashim fake device</span>', '<span class="kernel-module">580.95.05</span>',
                     '<span class="framework">torch 2.11.0+cu130</span>'):
            if want not in page:
                errors.append(f"5. the page lacks {want} (exit {pg.returncode}: {pg.stderr[-300:]})")
    r = run(d, "bare", [], CUDASHIM_DRIVER_VERSION_FILE=os.path.join(d, "absent"))
    if r:
        if r.get("driver", {}).get("kernel_module", "missing") is not None or r.get("frameworks") != []:
            errors.append(f"4. without a version file or a framework: driver {r.get('driver')}, frameworks {r.get('frameworks')}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: the report names the GPUs, the kernel module and the loaded frameworks")
sys.exit(1 if errors else 0)
