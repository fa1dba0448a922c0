#!/usr/bin/env python3
"""wheel_on_old_glibc.py --wheel WHL --fakecuda DIR --cudart LIBCUDART --cli CLI

The wheel on an older userland: a Debian 11 root filesystem (glibc 2.31, Python 3.9;
scripts/old_userland.sh builds and caches it), entered with chroot as an unprivileged
user (nobody). Inside, as that user:
  1. python3 -m venv, then pip install the wheel (no index, no network, no compiler);
  2. `cudashim run` (the console script) runs cudart_probe.py, which loads NVIDIA's real
     libcudart 12.9 with ctypes against the test-double driver;
  3. `python -m cudashim report` reads the run folder back.
Checks: every step exits 0, the loader never says "cannot be preloaded", exactly one
report is left, it is valid JSON with the pip-installed shim's version, and its count of
each driver ABI equals the double's own count (the exact-count rule of run_check.py).
Exit 77 (skipped) when the root filesystem cannot be had (not root, no network).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NOBODY = 65534
CHROOT = shutil.which("chroot", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") or "/usr/sbin/chroot"


class ProcMounted:
    """/proc inside the root filesystem while the programs run (the CLI and Python read
    /proc/self, as on any real system); unmounted again whatever happens."""

    def __init__(self, root):
        self.proc = os.path.join(root, "proc")

    def __enter__(self):
        if not os.path.ismount(self.proc):
            subprocess.run(["mount", "-t", "proc", "proc", self.proc], check=True)
            self.mounted = True
        else:
            self.mounted = False
        return self

    def __exit__(self, *exc):
        if self.mounted:
            subprocess.run(["umount", "-l", self.proc], check=False)


def rootfs():
    p = subprocess.run([os.path.join(ROOT, "scripts", "old_userland.sh"), "bullseye"], capture_output=True, text=True)
    if p.returncode == 77:
        print("SKIP: " + p.stderr.strip())
        sys.exit(77)
    if p.returncode != 0:
        print("FAIL: scripts/old_userland.sh: " + p.stderr.strip())
        sys.exit(1)
    return p.stdout.strip().splitlines()[-1]


def in_root(root, script, timeout=300):
    """Runs a shell script in the root filesystem as nobody, with a clean environment."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8"}
    return subprocess.run([CHROOT, f"--userspec={NOBODY}:{NOBODY}", root, "/bin/sh", "-c", script],
                          env=env, capture_output=True, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--fakecuda", required=True)
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--cli", required=True, help="the build's CLI, for the list of hooked names")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: chroot needs root (CI runs as root); the programs inside run as nobody")
        return 77
    wheels = glob.glob(a.wheel) if any(c in a.wheel for c in "*?[") else [a.wheel]
    if len(wheels) != 1 or not os.path.isfile(wheels[0]):
        print(f"FAIL: wheel {a.wheel!r}: expected one file, found {wheels}; build it with scripts/build_wheel.sh")
        return 1
    root = rootfs()
    glibc = subprocess.run([CHROOT, root, "/usr/bin/ldd", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    work = tempfile.mkdtemp(prefix="cudashim-oldglibc-", dir=os.path.join(root, "tmp"))
    inside = "/tmp/" + os.path.basename(work)
    errors = []
    try:
        shutil.copy(wheels[0], work)
        os.makedirs(os.path.join(work, "fake"))
        for f in ("libcuda.so.1", "libcuda.so"):
            shutil.copy(os.path.join(a.fakecuda, f), os.path.join(work, "fake", f))
        shutil.copy(a.cudart, os.path.join(work, "libcudart.so.12"))
        shutil.copy(os.path.join(HERE, "cudart_probe.py"), work)
        names = subprocess.run([a.cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout
        with open(os.path.join(work, "hook-names.txt"), "w") as f:
            f.write(names)
        for dirpath, dirnames, filenames in os.walk(work):
            for n in [dirpath] + [os.path.join(dirpath, x) for x in filenames]:
                os.chown(n, NOBODY, NOBODY)
        whl = os.path.basename(wheels[0])
        script = f"""set -e
cd {inside}
python3 -m venv venv
venv/bin/pip install --quiet --no-index --no-deps --disable-pip-version-check {whl}
venv/bin/python -c 'import cudashim, os; p = cudashim.library_path(); assert os.path.isfile(p), p; print("library", p)'
LD_LIBRARY_PATH={inside}/fake CUDASHIM_TEST_HOOK_NAMES={inside}/hook-names.txt \\
  venv/bin/cudashim run --out {inside}/run -- venv/bin/python cudart_probe.py {inside}/libcudart.so.12 {inside}/hook-names.txt > probe.json
venv/bin/python -m cudashim report {inside}/run > report.txt
echo done
"""
        with ProcMounted(root):
            p = in_root(root, script)
        print(f"{glibc}; {whl} installed and run as uid {NOBODY}")
        if p.returncode != 0 or "done" not in p.stdout:
            errors.append(f"the steps in the root filesystem failed (exit {p.returncode}):\nstdout: {p.stdout}\nstderr: {p.stderr}")
        if "cannot be preloaded" in p.stderr or "ERROR: ld.so" in p.stderr:
            errors.append(f"the loader refused the shim: {p.stderr}")
        reports = glob.glob(os.path.join(work, "run", "**", "cudashim-*.json"), recursive=True)
        reports = [r for r in reports if not r.endswith("-crash.json")]
        if not errors:
            probe = json.loads(open(os.path.join(work, "probe.json")).read().strip().splitlines()[-1])
            if len(reports) != 1:
                errors.append(f"expected one report in the run folder, found {reports}")
            else:
                rep = json.load(open(reports[0]))
                api = rep.get("api", {})
                for abi, n in sorted(probe["truth"].items()):
                    got = api.get(abi, {}).get("calls", 0)
                    if got != n:
                        errors.append(f"{abi}: the report counts {got}, the driver saw {n}")
                if len(probe.get("shim", [])) != 1 or "/venv/" not in probe["shim"][0]:
                    errors.append(f"the process mapped {probe.get('shim')}, not the venv's bundled library")
                if not probe["truth"]:
                    errors.append("the double saw no driver call: libcudart never reached it")
                print(f"runtime {probe['runtime_version']}: {len(probe['truth'])} driver ABIs, counts equal: "
                      + ", ".join(f"{k}={v}" for k, v in sorted(probe["truth"].items())))
            summary = open(os.path.join(work, "report.txt")).read()
            if "cudart_probe" not in summary and "python" not in summary:
                errors.append(f"`cudashim report` did not summarize the process: {summary[:400]}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: the wheel installs and runs on the old userland as an unprivileged user; exact counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
