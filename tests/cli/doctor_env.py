#!/usr/bin/env python3
"""doctor_env.py --cli CLI --goldens DIR --cu129 DIR: `cudashim doctor` on a Python environment built
here from NVIDIA's real CUDA 12.9 runtime wheel (scripts/setup.sh always unpacks it into .deps/cu129)
and stand-ins for torch: a torch dist-info (METADATA pinning its NVIDIA wheels, torch/version.py
saying the CUDA it was built for) and a libtorch_cuda.so built by cc. Torch itself is not needed:
what doctor reads of it is its metadata and the libraries' DT_NEEDED. Planted:
  broken   libnvshmem_host.so.3 (not a CUDA-table library) missing: library.not-found with the exact
           pip requirement from METADATA; two byte-identical copies of libcudart.so.12 in Triton's
           folder (one row); a 535 driver (--driver-version-file) under CUDA 12.9: minor compat
  old      torch built for CUDA 13.0 and the 535 driver file: doctor.driver-too-old, exit 4
  healthy  the same venv with nvshmem installed and a 580 driver: exit 0
  usage    a mistyped path and a FIFO: exit 3, one line, no hang
The first screen of the text and a digest of --json are compared with tests/cli/doctor_env_*.golden
(UPDATE_GOLDEN=1 rewrites them), and each --json document is validated against docs/doctor-schema.md. Host-dependent parts are left out of the comparison: the driver.*
findings and triton.libcuda-not-found (whether this host has libcuda), the loader's default folders and
cache in the evidence, and the count of notes. Exit 77 when the wheel is not unpacked.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

METADATA = """Metadata-Version: 2.1
Name: torch
Version: 2.10.0
Requires-Dist: filelock
Requires-Dist: nvidia-cuda-runtime-cu12==12.9.79; platform_system == "Linux"
Requires-Dist: nvidia-nvshmem-cu12==3.3.20; platform_system == "Linux"
Requires-Dist: triton==3.5.0; platform_system == "Linux"

PyTorch's long description would follow here.
"""

fails = []


def cc(out, source, *flags):
    os.makedirs(os.path.dirname(out), exist_ok=True)
    src = out + ".c"
    with open(src, "w") as f:
        f.write(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", out, src, "-Wl,-soname," + os.path.basename(out), *flags], check=True)
    os.unlink(src)


def build_venv(root, cu129, cuda, nvshmem):
    sp = os.path.join(root, "lib/python3.12/site-packages")
    os.makedirs(os.path.join(sp, "torch-2.10.0.dist-info"))
    with open(os.path.join(sp, "torch-2.10.0.dist-info/METADATA"), "w") as f:
        f.write(METADATA)
    os.makedirs(os.path.join(sp, "torch/lib"))
    with open(os.path.join(sp, "torch/version.py"), "w") as f:
        f.write(f"__version__ = '2.10.0+cu{cuda.replace('.', '')}'\ndebug = False\ncuda: Optional[str] = '{cuda}'\n")
    # NVIDIA's real runtime wheel, as pip installs it.
    shutil.copytree(os.path.join(cu129, "nvidia/cuda_runtime/lib"), os.path.join(sp, "nvidia/cuda_runtime/lib"),
                    ignore=shutil.ignore_patterns("*.a"))
    shutil.copytree(os.path.join(cu129, "nvidia_cuda_runtime_cu12-12.9.79.dist-info"),
                    os.path.join(sp, "nvidia_cuda_runtime_cu12-12.9.79.dist-info"))
    cudart = os.path.join(sp, "nvidia/cuda_runtime/lib/libcudart.so.12")
    # Planted: two byte-identical copies in Triton's folder (wheels hold no symlinks).
    tri = os.path.join(sp, "triton/backends/nvidia/lib")
    os.makedirs(tri)
    shutil.copyfile(cudart, os.path.join(tri, "libcudart.so.12"))
    shutil.copyfile(cudart, os.path.join(tri, "libcudart.so"))
    # Triton's bundled ptxas (a stand-in that answers --version like CUDA 12.8's) and its dist-info.
    os.makedirs(os.path.join(sp, "triton/backends/nvidia/bin"))
    ptxas = os.path.join(sp, "triton/backends/nvidia/bin/ptxas")
    with open(ptxas, "w") as f:
        f.write("#!/bin/sh\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n")
    os.chmod(ptxas, 0o755)
    with open(os.path.join(sp, "triton/backends/nvidia/driver.py"), "w") as f:
        f.write("libraries = ['libcuda.so.1']\n")
    os.makedirs(os.path.join(sp, "triton-3.5.0.dist-info"))
    with open(os.path.join(sp, "triton-3.5.0.dist-info/RECORD"), "w") as f:
        f.write("triton/backends/nvidia/lib/libcudart.so.12,,\ntriton/backends/nvidia/lib/libcudart.so,,\n")
    nvshmem_dir = os.path.join(sp, "nvidia/nvshmem/lib")
    cc(os.path.join(nvshmem_dir, "libnvshmem_host.so.3"), "int nvshmem_init(void) { return 0; }\n")
    cc(os.path.join(sp, "torch/lib/libtorch_cuda.so"),
       "int nvshmem_init(void);\nint cudaGetDeviceCount(int*);\nint t(void) { int n; return nvshmem_init() + cudaGetDeviceCount(&n); }\n",
       "-L" + nvshmem_dir, "-l:libnvshmem_host.so.3", "-L" + os.path.dirname(cudart), "-l:libcudart.so.12",
       "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN/../../nvidia/cuda_runtime/lib:$ORIGIN/../../nvidia/nvshmem/lib")
    if not nvshmem:
        shutil.rmtree(os.path.join(sp, "nvidia/nvshmem"))
    return sp


def driver_file(root, release):
    path = os.path.join(root, f"driver-{release}.txt")
    with open(path, "w") as f:
        f.write(f"NVRM version: NVIDIA UNIX x86_64 Kernel Module  {release}  Release Build  (dvs-builder@U16)\n"
                "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    return path


HOST_LINE = re.compile(r"\[(default path|ld\.so\.cache)\]|tried (/lib|/usr/lib)|libcuda folders: ")
HOST_IDS = ("driver.", "triton.libcuda-not-found")  # whether this host has a libcuda


def first_screen(text, base, root):
    """The text report up to its LIBRARIES section (at most 40 lines), without host-dependent parts."""
    out, skip = [], False
    for line in text.replace(base, "$VENV").replace(root, "$TMP").splitlines():
        if line == "LIBRARIES":
            break
        if line.startswith(tuple("  [" + i for i in HOST_IDS)):
            skip = True
            continue
        if skip:
            skip = not line.startswith("    fix: ")
            continue
        if HOST_LINE.search(line):
            continue
        out.append(re.sub(r"\d+ notes$", "N notes", line))
    return "\n".join(out[:40]) + "\n"


def digest(doc, base, root):
    doc = json.loads(json.dumps(doc).replace(base, "$VENV").replace(root, "$TMP"))
    findings = [f for f in doc["findings"] if not f["id"].startswith(HOST_IDS)]
    return json.dumps({
        "headline": doc["headline"],
        "exit_code": doc["summary"]["exit_code"],
        "findings": [{"id": f["id"], "severity": f["severity"], "vendor_internal": f["vendor_internal"], "subject": f["subject"],
                      "message": f["message"], "evidence": [e for e in f["evidence"] if not HOST_LINE.search(e)],
                      "fix": f["fix"]} for f in findings],
        "libraries": [{"path": lib["path"], "version": lib.get("version"), "version_source": lib.get("version_source"),
                       "identical_copies": lib["identical_copies"]} for lib in doc["libraries"]],
    }, indent=1) + "\n"


def doctor(cli, args, env):
    return subprocess.run([cli, "doctor", "--sm", "90", *args], capture_output=True, text=True, env=env, timeout=120)


def compare(goldens, name, got):
    path = os.path.join(goldens, f"doctor_env_{name}.golden")
    if os.environ.get("UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(got)
    want = open(path).read() if os.path.exists(path) else ""
    if got != want:
        fails.append(f"{name}: output differs from {path}\n--- got\n{got}\n--- want\n{want}")
    else:
        print(f"ok: {name} matches {os.path.basename(path)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--goldens", required=True)
    ap.add_argument("--cu129", required=True, help=".deps/cu129 (NVIDIA's CUDA 12.9 runtime wheel, unpacked)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.cu129, "nvidia/cuda_runtime/lib/libcudart.so.12")):
        print(f"skip: {a.cu129}/nvidia/cuda_runtime/lib/libcudart.so.12 missing (run scripts/setup.sh)")
        return 77
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD") and not k.startswith(("CUDASHIM_", "TRITON_"))}
    env["NO_COLOR"] = "1"
    root = tempfile.mkdtemp(prefix="cudashim-doctor-env-")
    try:
        cases = {
            "broken": (build_venv(os.path.join(root, "broken"), a.cu129, "12.9", nvshmem=False), "535.104.05", 4),
            "old": (build_venv(os.path.join(root, "old"), a.cu129, "13.0", nvshmem=True), "535.104.05", 4),
            "healthy": (build_venv(os.path.join(root, "healthy"), a.cu129, "12.9", nvshmem=True), "580.95.05", 0),
        }
        for name, (sp, release, want_rc) in cases.items():
            base = os.path.dirname(os.path.dirname(os.path.dirname(sp)))
            args = ["--driver-version-file", driver_file(root, release), "--mountinfo", os.devnull, sp]
            text = doctor(a.cli, args, env)
            js = doctor(a.cli, ["--json", *args], env)
            if text.returncode != want_rc or js.returncode != want_rc:
                fails.append(f"{name}: exit {text.returncode} (text), {js.returncode} (json), want {want_rc}\n{text.stderr}{js.stderr}")
            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
                f.write(js.stdout)
            schema = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "doctor-schema.md")
            chk = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hygiene",
                                  "check_report_schema.py"), schema, f.name], capture_output=True, text=True)
            os.unlink(f.name)
            if chk.returncode != 0:
                fails.append(f"{name}: --json does not match docs/doctor-schema.md:\n{chk.stdout[-1500:]}")
            compare(a.goldens, name, f"exit {text.returncode}\n--- first screen\n{first_screen(text.stdout, base, root)}"
                                      f"--- json digest\n{digest(json.loads(js.stdout), base, root)}")
        # Usage errors: exit 3 and one line naming the input, never a finding, never a hang.
        fifo = os.path.join(root, "pipe")
        os.mkfifo(fifo)
        for what, path in (("a mistyped path", os.path.join(root, "site-pakages")), ("a FIFO", fifo)):
            p = doctor(a.cli, [path], env)
            lines = p.stderr.splitlines()
            if p.returncode != 3 or len(lines) != 1 or path not in lines[0] or p.stdout:
                fails.append(f"usage: {what}: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout[:200]!r}")
            else:
                print(f"ok: {what}: exit 3, {lines[0].replace(root, '$TMP')}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    for f in fails:
        print("FAIL: " + f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
