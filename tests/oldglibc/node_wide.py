#!/usr/bin/env python3
"""node_wide.py --wheel WHL --fakecuda DIR --cudart LIBCUDART

The node-wide deployment (docs/deploy.md) on Debian 11's glibc 2.31, in the chroot of
scripts/old_userland.sh: the wheel pip-installed into /opt/cudashim (as root, once), its
library named in /etc/ld.so.preload, and a deliberately broken /etc/cudashim/policy.toml.
Then, as the unprivileged user nobody:
  - ordinary processes that never touch CUDA (bash, coreutils, python3; exits 0, 1, 3, 5):
    the same exit status, stdout and stderr as with no preload at all, and no file left in
    the output folder;
  - a process that uses CUDA (NVIDIA's libcudart 12.9 on the test-double driver) stops
    with exit 78 before any CUDA work and says why once (policy.on_invalid = "fail", the
    default); with on_invalid = "warn" it runs, with one warning;
  - the cost of the preload on a process that never touches CUDA: /bin/true started 200
    times each way, the ratio printed.
The chroot's /etc/ld.so.preload and /etc/cudashim are removed again whatever happens.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wheel_on_old_glibc import CHROOT, NOBODY, ProcMounted, rootfs  # noqa: E402

BROKEN = '[memory]\ncap = "lots"\nmanaged = "sometimes"\n[policy\n'
PROGRAMS = [
    ["/bin/bash", "-c", "echo step1; echo to-stderr >&2"],
    ["/bin/ls", "/"],
    ["/bin/cat", "/etc/debian_version"],
    ["/bin/true"],
    ["/bin/false"],
    ["/bin/sh", "-c", "exit 3"],
    ["/usr/bin/env"],
    ["/usr/bin/python3", "-c", "import threading, json; t = threading.Thread(target=print, args=('py',)); t.start(); t.join()"],
    ["/usr/bin/python3", "-c", "import sys; print('bye'); sys.exit(5)"],
    ["/usr/bin/sort", "/etc/passwd"],
]


def run(root, argv, user=True, env=None, timeout=60):
    e = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "CUDASHIM_OUT": "/tmp/nodewide-out"}
    e.update(env or {})
    pre = [CHROOT] + ([f"--userspec={NOBODY}:{NOBODY}"] if user else []) + [root]
    return subprocess.run(pre + argv, env=e, capture_output=True, text=True, timeout=timeout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheel", required=True)
    ap.add_argument("--fakecuda", required=True)
    ap.add_argument("--cudart", required=True)
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("SKIP: chroot needs root (CI runs as root); the programs inside run as nobody")
        return 77
    root = rootfs()
    preload = os.path.join(root, "etc", "ld.so.preload")
    etc_cs = os.path.join(root, "etc", "cudashim")
    opt = os.path.join(root, "opt", "cudashim")
    out = os.path.join(root, "tmp", "nodewide-out")
    errors = []

    def clean():
        for p in (preload,):
            if os.path.exists(p):
                os.unlink(p)
        for d in (etc_cs, opt, out, os.path.join(root, "tmp", "nodewide")):
            shutil.rmtree(d, ignore_errors=True)

    clean()
    with ProcMounted(root):
        return run_all(a, root, preload, etc_cs, opt, out, errors, clean)


def run_all(a, root, preload, etc_cs, opt, out, errors, clean):
    try:
        os.makedirs(opt)
        shutil.copy(a.wheel, opt)
        whl = "/opt/cudashim/" + os.path.basename(a.wheel)
        p = run(root, ["/bin/sh", "-c", f"python3 -m venv /opt/cudashim/venv && /opt/cudashim/venv/bin/pip install "
                       f"--quiet --no-index --no-deps --disable-pip-version-check {whl} && /opt/cudashim/venv/bin/python "
                       "-c 'import cudashim; print(cudashim.library_path())'"], user=False, timeout=300)
        if p.returncode != 0:
            print(f"FAIL: installing the wheel into /opt/cudashim: {p.stderr}")
            return 1
        lib = p.stdout.strip().splitlines()[-1]
        work = os.path.join(root, "tmp", "nodewide")
        os.makedirs(os.path.join(work, "fake"))
        for f in ("libcuda.so.1", "libcuda.so"):
            shutil.copy(os.path.join(a.fakecuda, f), os.path.join(work, "fake", f))
        shutil.copy(a.cudart, os.path.join(work, "libcudart.so.12"))
        shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "cudart_probe.py"), work)
        with open(os.path.join(work, "names.txt"), "w") as f:
            f.write("cuInit\n")
        os.makedirs(out)
        os.chmod(out, 0o1777)

        baseline = [run(root, argv) for argv in PROGRAMS]
        t0 = time.perf_counter()
        for _ in range(200):
            run(root, ["/bin/true"])
        t_plain = time.perf_counter() - t0

        os.makedirs(etc_cs)
        with open(os.path.join(etc_cs, "policy.toml"), "w") as f:
            f.write(BROKEN)
        with open(preload, "w") as f:
            f.write(lib + "\n")
        print(f"/etc/ld.so.preload -> {lib}; /etc/cudashim/policy.toml is broken ({BROKEN!r})")
        print(f"{'program':<60} {'exit, no shim':>14} {'exit, shim':>11}  same output")
        for argv, b in zip(PROGRAMS, baseline):
            s = run(root, argv)
            same = (s.returncode, s.stdout, s.stderr) == (b.returncode, b.stdout, b.stderr)
            print(f"{' '.join(argv)[:60]:<60} {b.returncode:>14} {s.returncode:>11}  {'yes' if same else 'NO'}")
            if not same:
                errors.append(f"{argv}: without the shim exit {b.returncode} stdout {b.stdout!r} stderr {b.stderr!r}; "
                              f"with it exit {s.returncode} stdout {s.stdout!r} stderr {s.stderr!r}")
        left = os.listdir(out)
        if left:
            errors.append(f"processes that never touched CUDA left files in CUDASHIM_OUT: {left}")
        t0 = time.perf_counter()
        for _ in range(200):
            run(root, ["/bin/true"])
        t_shim = time.perf_counter() - t0
        print(f"/bin/true x200 (chroot + exec each): {t_plain * 5:.2f} ms per run without, {t_shim * 5:.2f} ms with "
              f"the preload: ratio {t_shim / t_plain:.3f}")

        cuda = ["/usr/bin/python3", "/tmp/nodewide/cudart_probe.py", "/tmp/nodewide/libcudart.so.12", "/tmp/nodewide/names.txt"]
        cenv = {"LD_LIBRARY_PATH": "/tmp/nodewide/fake"}
        c = run(root, cuda, env=cenv)
        print(f"{'python3 cudart_probe.py (uses CUDA), on_invalid = fail':<60} {'':>14} {c.returncode:>11}")
        if c.returncode != 78:
            errors.append(f"a CUDA process under the broken policy must stop with 78: exit {c.returncode}, {c.stderr!r}")
        if c.stdout:
            errors.append(f"the CUDA process ran past the policy check (stdout {c.stdout!r})")
        if c.stderr.count("/etc/cudashim/policy.toml") < 1:
            errors.append(f"the stop does not name /etc/cudashim/policy.toml: {c.stderr!r}")
        with open(os.path.join(etc_cs, "policy.toml"), "w") as f:
            f.write('[policy]\non_invalid = "warn"\n[memory]\ncap = "lots"\n')
        w = run(root, cuda, env=cenv)
        print(f"{'python3 cudart_probe.py (uses CUDA), on_invalid = warn':<60} {'':>14} {w.returncode:>11}")
        if w.returncode != 0 or '"truth"' not in w.stdout:
            errors.append(f"with on_invalid = warn the CUDA process must run: exit {w.returncode}, {w.stderr!r}")
        if w.stderr.count("warning") != 1:
            errors.append(f"with on_invalid = warn, exactly one warning line expected: {w.stderr!r}")
    finally:
        clean()
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok: node-wide preload under a broken policy: non-CUDA processes unchanged, the CUDA one stopped once")
    return 0


if __name__ == "__main__":
    sys.exit(main())
