#!/usr/bin/env python3
"""node_wide.py SHIM FAKECUDA_DIR PROG: the node-wide preload (/etc/ld.so.preload and one
policy file for every process, ssh and bash included) under a deliberately broken policy.

Each non-CUDA program (bash, sh, coreutils, Python, and Python loading libcuda without calling
it) runs with the shim preloaded and each broken policy (a bad value, a TOML syntax error,
200 and 100,000 unknown keys, a FIFO, /dev/zero, a directory, a missing file, and the bad value
under on_invalid = "warn"), and once without the shim: exit code, stdout and stderr must be the same,
byte for byte. PROG (tests/progs/driver_paths), which does use CUDA, must still stop with exit
78 and the one line naming the file under each policy that fails. Before this, every one of
these processes exited 78 at load, and the FIFO hung them all.

Prints the table of programs with their exit codes without and with the shim, and the time the
slowest process took with the shim against without it."""
import os
import subprocess
import sys
import tempfile
import time

shim, fake, prog = sys.argv[1:4]
errs = []

with tempfile.TemporaryDirectory() as d:
    data = os.path.join(d, "data.txt")
    with open(data, "w") as f:
        f.write("alpha\nbeta\n")

    def policy(name, text):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    bad_value = policy("bad_value.toml", '[memory]\nmanaged = "sometimes"\n')
    policies = {
        "bad value": (bad_value, True),
        "TOML syntax error": (policy("syntax.toml", '[memory\ncap = "8GiB"\n'), True),
        "200 unknown keys": (policy("keys.toml", "[memory]\n" + "".join(f"k{i}=1\n" for i in range(200))), True),
        "100,000 unknown keys": (policy("many.toml", "[memory]\n" + "".join(f"k{i}=1\n" for i in range(100000))), True),
        "a FIFO": (os.path.join(d, "fifo"), True),
        "/dev/zero": ("/dev/zero", True),
        "a directory": (d, True),
        "a missing file": (os.path.join(d, "missing.toml"), True),
        "bad value, on_invalid = warn": (policy("warn.toml", '[policy]\non_invalid = "warn"\n[memory]\nmanaged = "x"\n'),
                                         False),
    }
    os.mkfifo(policies["a FIFO"][0])
    programs = [
        ["bash", "-c", "echo step1"],
        ["sh", "-c", "echo out; echo err >&2; exit 7"],
        ["bash", "-c", "seq 1 2000 | sort -rn | head -3; ls /nonexistent-dir"],
        ["ls", "-l", "--time-style=+", data],
        ["cat", data],
        ["true"],
        ["false"],
        ["grep", "-c", "a", data],
        [sys.executable, "-c", "import sys, subprocess; print('py', sys.version_info[0]); "
                               "subprocess.run(['echo', 'child']); sys.stderr.write('to stderr\\n'); sys.exit(3)"],
        [sys.executable, "-c", "import ctypes; ctypes.CDLL('libcuda.so.1'); print('libcuda loaded, never called')"],
    ]
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_") and k != "LD_PRELOAD"}
    base_env["LD_LIBRARY_PATH"] = fake

    def run(cmd, env):
        t0 = time.monotonic()
        p = subprocess.run(cmd, env=env, capture_output=True, timeout=30, cwd=d)
        return p, time.monotonic() - t0

    table = []
    slowest = {"without": 0.0, "with": 0.0}
    for cmd in programs:
        name = " ".join(os.path.basename(c) if i == 0 else c for i, c in enumerate(cmd))[:60]
        plain, t_plain = run(cmd, base_env)
        slowest["without"] = max(slowest["without"], t_plain)
        codes = []
        for label, (path, _) in policies.items():
            env = dict(base_env, LD_PRELOAD=shim, CUDASHIM_OUT=d, CUDASHIM_POLICY=path)
            try:
                p, t = run(cmd, env)
            except subprocess.TimeoutExpired:
                errs.append(f"{name} under {label}: still running after 30 s")
                codes.append("hung")
                continue
            slowest["with"] = max(slowest["with"], t)
            codes.append(str(p.returncode))
            for what, a, b in (("exit code", plain.returncode, p.returncode), ("stdout", plain.stdout, p.stdout),
                               ("stderr", plain.stderr, p.stderr)):
                if a != b:
                    errs.append(f"{name} under {label}: {what} differs: {a!r:.200} without the shim, {b!r:.200} with it")
        table.append((name, plain.returncode, codes))

    # The CUDA program under the same policies: stopped at its first CUDA call with the one line.
    for label, (path, fails) in policies.items():
        env = dict(base_env, LD_PRELOAD=shim, CUDASHIM_OUT=d, CUDASHIM_POLICY=path)
        try:
            p, _ = run([prog, "procaddr", "3"], env)
        except subprocess.TimeoutExpired:
            errs.append(f"driver_paths under {label}: still running after 30 s")
            continue
        stderr = p.stderr.decode(errors="replace")
        lines = [l for l in stderr.splitlines() if l.startswith("cudashim[")]
        shown = path
        if fails:
            if p.returncode != 78 or len(lines) != 1 or f"error: invalid policy: {shown}" not in lines[0] \
                    or "stopping at the first CUDA call (exit 78)" not in lines[0]:
                errs.append(f"driver_paths under {label}: exit {p.returncode}, expected 78 and one line naming "
                            f"{shown}: {lines}")
        elif p.returncode != 0 or not any("invalid policy (ignored" in l and shown in l for l in lines):
            errs.append(f"driver_paths under {label}: exit {p.returncode}, expected 0 and a warning: {lines}")

    print(f"{'program':<62} {'no shim':>7}  with the shim, per policy: " + ", ".join(policies))
    for name, rc, codes in table:
        print(f"{name:<62} {rc:>7}  {' '.join(codes)}")
    print(f"slowest process: {slowest['without'] * 1000:.0f} ms without the shim, "
          f"{slowest['with'] * 1000:.0f} ms with it")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print(f"ok: {len(programs)} programs x {len(policies)} broken policies: exit codes, stdout and stderr as without the "
      "shim; the CUDA program stops with exit 78 and one line (runs under on_invalid = warn)")
