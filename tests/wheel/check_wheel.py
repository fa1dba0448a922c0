#!/usr/bin/env python3
"""check_wheel.py --wheel WHL --fakecuda DIR --cudart LIBCUDART --cli CLI [--pytools DIR]

The wheel as a user gets it:
  1. its files: exactly the package, the two native files (the CLI executable), the
     dist-info; every RECORD hash matches;
  2. `auditwheel show` (from DIR, scripts/setup.sh --tests) reports manylinux_2_28 or an
     older policy for it;
  3. `pip install --target` into a fresh folder (no index, no root), then the console
     script and `python -m cudashim` both run the bundled CLI, and `cudashim run` (no
     --shim, no CUDASHIM_LIB) preloads the bundled library into a program that drives
     NVIDIA's libcudart 12.9 against the test-double driver: the report's count of each
     driver ABI equals the double's own.
"""
import argparse
import base64
import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(os.path.dirname(HERE), "oldglibc", "cudart_probe.py")


def check_files(whl, errors):
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    m = re.match(r"cudashim-([0-9.]+)-py3-none-manylinux_2_(\d+)_x86_64\.whl$", os.path.basename(whl))
    if not m:
        errors.append(f"{whl}: not named cudashim-VERSION-py3-none-manylinux_2_X_x86_64.whl")
        return
    di = f"cudashim-{m.group(1)}.dist-info"
    want = {"cudashim/__init__.py", "cudashim/__main__.py", "cudashim/_version.py", "cudashim/lib/libcudashim.so",
            "cudashim/bin/cudashim", f"{di}/METADATA", f"{di}/WHEEL", f"{di}/RECORD", f"{di}/entry_points.txt"}
    if names != want:
        errors.append(f"wheel files: missing {sorted(want - names)}, unexpected {sorted(names - want)}")
    mode = z.getinfo("cudashim/bin/cudashim").external_attr >> 16 if "cudashim/bin/cudashim" in names else 0
    if not mode & 0o100:
        errors.append(f"cudashim/bin/cudashim is not executable in the wheel (mode {oct(mode)})")
    if f"{di}/RECORD" in names:
        for line in z.read(f"{di}/RECORD").decode().splitlines():
            path, digest, size = line.rsplit(",", 2)
            if path.endswith("RECORD"):
                continue
            data = z.read(path)
            d = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            if digest != f"sha256={d}" or int(size) != len(data):
                errors.append(f"RECORD does not match {path}")
    print(f"files: {len(names)} in {os.path.basename(whl)}, "
          f"library {z.getinfo('cudashim/lib/libcudashim.so').file_size >> 10} KiB, "
          f"CLI {z.getinfo('cudashim/bin/cudashim').file_size >> 10} KiB")


def check_auditwheel(whl, pytools, errors):
    if not pytools or not os.path.isdir(os.path.join(pytools, "auditwheel")):
        print(f"SKIP(auditwheel): not installed in {pytools!r}; scripts/setup.sh --tests installs it")
        return False
    env = dict(os.environ, PYTHONPATH=pytools)
    p = subprocess.run([sys.executable, "-m", "auditwheel", "show", whl], env=env, capture_output=True, text=True)
    text = " ".join((p.stdout + p.stderr).split())
    tags = re.findall(r'"manylinux_2_(\d+)_x86_64"', text)
    if p.returncode != 0 or not tags:
        errors.append(f"auditwheel show failed (exit {p.returncode}): {text[:600]}")
        return True
    worst = max(int(t) for t in tags)
    print(f"auditwheel: {text[:300]}")
    if worst > 28:
        errors.append(f"auditwheel puts the wheel at manylinux_2_{worst}, newer than manylinux_2_28")
    return True


def check_install_and_run(whl, fakecuda, cudart, cli, errors):
    with tempfile.TemporaryDirectory(prefix="cudashim-wheel-") as d:
        target = os.path.join(d, "site")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                            "--disable-pip-version-check", "--target", target, whl], capture_output=True, text=True)
        if p.returncode != 0:
            errors.append(f"pip install --target failed: {p.stderr}")
            return
        env = dict(os.environ, PYTHONPATH=target)
        env.pop("CUDASHIM_LIB", None)
        for cmd in ([os.path.join(target, "bin", "cudashim"), "--version"], [sys.executable, "-m", "cudashim", "--version"]):
            v = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if v.returncode != 0 or not v.stdout.strip():
                errors.append(f"{' '.join(cmd)}: exit {v.returncode}, {v.stderr!r}")
        names = subprocess.run([cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout
        names_file = os.path.join(d, "hook-names.txt")
        with open(names_file, "w") as f:
            f.write(names)
        out = os.path.join(d, "run")
        env.update(LD_LIBRARY_PATH=fakecuda, CUDASHIM_TEST_HOOK_NAMES=names_file)
        r = subprocess.run([os.path.join(target, "bin", "cudashim"), "run", "--out", out, "--",
                            sys.executable, PROBE, cudart, names_file], env=env, capture_output=True, text=True,
                           timeout=120)
        if r.returncode != 0:
            errors.append(f"cudashim run (pip-installed) exit {r.returncode}: {r.stderr}")
            return
        probe = json.loads(r.stdout.strip().splitlines()[-1])
        reports = [f for f in glob.glob(os.path.join(out, "**", "cudashim-*.json"), recursive=True)
                   if not f.endswith("-crash.json")]
        if len(reports) != 1:
            errors.append(f"expected one report, found {reports}")
            return
        rep = json.load(open(reports[0]))
        bundled = os.path.realpath(os.path.join(target, "cudashim", "lib", "libcudashim.so"))
        maps_ok = probe.get("shim") == [bundled]
        for abi, n in sorted(probe["truth"].items()):
            got = rep.get("api", {}).get(abi, {}).get("calls", 0)
            if got != n:
                errors.append(f"{abi}: the report counts {got}, the driver saw {n}")
        if not probe["truth"]:
            errors.append("the double saw no driver call")
        print(f"pip install --target + cudashim run: runtime {probe['runtime_version']}, "
              f"{len(probe['truth'])} driver ABIs counted exactly; the process mapped the bundled library: {maps_ok}")
        if not maps_ok:
            errors.append(f"the process mapped {probe.get('shim')}, not the bundled library {bundled}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--fakecuda", required=True)
    ap.add_argument("--cudart", required=True)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--pytools")
    a = ap.parse_args()
    if not os.path.isfile(a.wheel):
        print(f"FAIL: no wheel at {a.wheel}: build the `wheel` target (it is part of the default build)")
        return 1
    errors = []
    check_files(a.wheel, errors)
    check_auditwheel(a.wheel, a.pytools, errors)
    check_install_and_run(a.wheel, a.fakecuda, a.cudart, a.cli, errors)
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: the wheel holds what it should, is manylinux_2_28 or older, and runs pip-installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
