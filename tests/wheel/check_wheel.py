#!/usr/bin/env python3
"""check_wheel.py --wheel WHL --fakecuda DIR --cudart LIBCUDART --cli CLI [--pytools DIR]
                [--arch aarch64 --qemu-exec QEMU_EXEC --qemu QEMU --guest-root ROOT]

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
With --arch aarch64 (tests/aarch64, on an x86-64 machine) the wheel must be the
manylinux_2_28_aarch64 one; pip installs it with --platform, and everything that runs is
AArch64 under qemu-user through copies of QEMU_EXEC (tests/aarch64/qemu_exec.c), made
here for the installed CLI and for the guest root's CPython 3.11: the CLI's --version,
`import cudashim` (its library_path() and cli_path() inside the install), and the
installed CLI's `cudashim run` of NVIDIA's arm64 libcudart. The console script and
`python -m cudashim` exec the AArch64 CLI from the guest, which qemu-user cannot start
without binfmt_misc: those two are not run there (docs/aarch64.md).
"""
import argparse
import base64
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROBE = os.path.join(os.path.dirname(HERE), "oldglibc", "cudart_probe.py")


ARCH = "x86_64"


def check_files(whl, errors):
    z = zipfile.ZipFile(whl)
    names = set(z.namelist())
    m = re.match(r"cudashim-([0-9.]+)-py3-none-manylinux_2_(\d+)_" + ARCH + r"\.whl$", os.path.basename(whl))
    if not m:
        errors.append(f"{whl}: not named cudashim-VERSION-py3-none-manylinux_2_X_{ARCH}.whl")
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
    tags = re.findall(r'"manylinux_2_(\d+)_' + ARCH + '"', text)
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
        bundled = os.path.realpath(os.path.join(target, "cudashim", "lib", "libcudashim.so"))
        report_run(r, out, bundled, "pip install --target + cudashim run", errors)


def qemu_wrapper(qemu_exec, qemu, root, program, path):
    """A copy of qemu_exec at `path` that runs the AArch64 `program` under qemu (its sidecar beside it)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    shutil.copy(qemu_exec, path)
    with open(path + ".qemu", "w") as f:
        f.write(f"{qemu}\n{root}\n{program}\n")
    return path


def check_install_and_run_qemu(whl, fakecuda, cudart, cli, a, errors):
    """The aarch64 wheel: pip --platform install, then its files run under qemu-user."""
    with tempfile.TemporaryDirectory(prefix="cudashim-wheel-") as d:
        target = os.path.join(d, "site")
        p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                            "--disable-pip-version-check", "--platform", f"manylinux_2_28_{ARCH}",
                            "--only-binary=:all:", "--target", target, whl], capture_output=True, text=True)
        if p.returncode != 0:
            errors.append(f"pip install --platform manylinux_2_28_{ARCH} --target failed: {p.stderr}")
            return
        installed_cli = os.path.join(target, "cudashim", "bin", "cudashim")
        bundled = os.path.realpath(os.path.join(target, "cudashim", "lib", "libcudashim.so"))
        q_cli = qemu_wrapper(a.qemu_exec, a.qemu, a.guest_root, installed_cli, os.path.join(d, "q", "cudashim"))
        q_py = qemu_wrapper(a.qemu_exec, a.qemu, a.guest_root, os.path.join(a.guest_root, "usr/bin/python3.11"),
                            os.path.join(d, "q", "python3.11"))
        env = dict(os.environ, PYTHONPATH=target)
        env.pop("CUDASHIM_LIB", None)
        v = subprocess.run([q_cli, "--version"], env=env, capture_output=True, text=True)
        if v.returncode != 0 or not v.stdout.startswith("cudashim "):
            errors.append(f"the installed CLI under qemu: --version exit {v.returncode}, {v.stdout!r} {v.stderr!r}")
        i = subprocess.run([q_py, "-c", "import cudashim, platform; print(platform.machine()); "
                            "print(cudashim.library_path()); print(cudashim.cli_path())"],
                           env=env, capture_output=True, text=True)
        got = i.stdout.split("\n")[:3]
        want = [ARCH, bundled, os.path.realpath(installed_cli)]
        if i.returncode != 0 or [got[0]] + [os.path.realpath(x) for x in got[1:]] != want:
            errors.append(f"import cudashim on the guest's CPython: exit {i.returncode}, {got} (want {want}) {i.stderr!r}")
        names = subprocess.run([cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout
        names_file = os.path.join(d, "hook-names.txt")
        with open(names_file, "w") as f:
            f.write(names)
        out = os.path.join(d, "run")
        env.update(LD_LIBRARY_PATH=fakecuda, CUDASHIM_TEST_HOOK_NAMES=names_file)
        r = subprocess.run([q_cli, "run", "--out", out, "--", q_py, PROBE, cudart, names_file], env=env,
                           capture_output=True, text=True, timeout=240)
        report_run(r, out, bundled, "cudashim run (pip-installed, under qemu)", errors)


def report_run(r, out, bundled, what, errors):
    """Checks a `cudashim run` of cudart_probe.py: one report whose driver counts equal the double's."""
    if r.returncode != 0:
        errors.append(f"{what} exit {r.returncode}: {r.stderr}")
        return
    probe = json.loads(r.stdout.strip().splitlines()[-1])
    reports = [f for f in glob.glob(os.path.join(out, "**", "cudashim-*.json"), recursive=True)
               if not f.endswith("-crash.json")]
    if len(reports) != 1:
        errors.append(f"expected one report, found {reports}")
        return
    rep = json.load(open(reports[0]))
    maps_ok = probe.get("shim") == [bundled]
    for abi, n in sorted(probe["truth"].items()):
        got = rep.get("api", {}).get(abi, {}).get("calls", 0)
        if got != n:
            errors.append(f"{abi}: the report counts {got}, the driver saw {n}")
    if not probe["truth"]:
        errors.append("the double saw no driver call")
    print(f"{what}: runtime {probe['runtime_version']}, "
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
    ap.add_argument("--arch", default="x86_64", choices=["x86_64", "aarch64"])
    ap.add_argument("--qemu-exec", help="tests/aarch64/qemu_exec.c built for the host (--arch aarch64)")
    ap.add_argument("--qemu", help="qemu-aarch64 (--arch aarch64)")
    ap.add_argument("--guest-root", help="the arm64 root of scripts/arm64_userland.sh (--arch aarch64)")
    a = ap.parse_args()
    global ARCH
    ARCH = a.arch
    if not os.path.isfile(a.wheel):
        print(f"FAIL: no wheel at {a.wheel}: build the `wheel` target (it is part of the default build)")
        return 1
    errors = []
    check_files(a.wheel, errors)
    check_auditwheel(a.wheel, a.pytools, errors)
    if ARCH == "x86_64":
        check_install_and_run(a.wheel, a.fakecuda, a.cudart, a.cli, errors)
    else:
        check_install_and_run_qemu(a.wheel, a.fakecuda, a.cudart, a.cli, a, errors)
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: the wheel holds what it should, is manylinux_2_28 or older, and runs pip-installed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
