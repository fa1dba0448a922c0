#!/usr/bin/env python3
"""run_job_control.py CLI SHIM FAKECUDA_DIR: `cudashim run` on a terminal, as a shell's job (issue 21.1).

A session of its own with a pseudo-terminal as its controlling terminal (pty.fork), the wrapper
its foreground process group, as when a user types `cudashim run -- python3 job.py` at a shell:
  1. the job reads the terminal: it is the foreground group (a background group reading it
     would be stopped by SIGTTIN, and the line would never arrive);
  2. Ctrl-Z stops the job, and the wrapper stops itself with it, so a shell sees the job
     stopped and gets its terminal back;
  3. SIGCONT to the wrapper (what `fg` does) gives the terminal back to the job, which reads
     the next line;
  4. Ctrl-C ends the job through KeyboardInterrupt; its report is written, the summary is
     printed on the terminal and the wrapper exits 130.
Each step fails if the wrapper did not hand the terminal to the job's process group (the job
reads nothing), or did not follow the job's stop (the wrapper keeps running, or the job stays
stopped after the continue).
"""
import glob
import json
import os
import pty
import select
import signal
import sys
import tempfile
import time

cli, shim, fake = sys.argv[1:4]
JOB = r"""
import ctypes, os
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
print("ready", os.getpid(), "go", flush=True)
while True:
    line = input()
    cuda.cuInit(0)
    print("got", line, flush=True)
"""
errors = []
seen = b""


def read_until(fd, want, timeout):
    """Reads the terminal until `want` appears in what it wrote; True when it did."""
    global seen
    end = time.monotonic() + timeout
    while want not in seen:
        left = end - time.monotonic()
        if left <= 0:
            return False
        r, _, _ = select.select([fd], [], [], left)
        if not r:
            continue
        try:
            data = os.read(fd, 65536)
        except OSError:
            return want in seen
        if not data:
            return want in seen
        seen += data
    return True


def state(pid):
    """The process state letter from /proc (R, S, T, Z...), or '?' when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "?"


def wait_state(pid, letters, timeout=10):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if state(pid) in letters:
            return True
        time.sleep(0.02)
    return False


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="warn", NO_COLOR="1")
    env.pop("LD_PRELOAD", None)
    wrapper, master = pty.fork()
    if wrapper == 0:
        os.execve(cli, [cli, "run", "--out", out, "--", sys.executable, "-c", JOB], env)
    job = None
    try:
        if not read_until(master, b" go", 30):
            errors.append(f"the job did not start: {seen[-800:]!r}")
        else:
            job = int(seen.split(b"ready", 1)[1].split()[0])
            os.write(master, b"first\n")
            if not read_until(master, b"got first", 10):
                errors.append(f"1. the job did not read the terminal (state {state(job)}; "
                              f"a background group is stopped by SIGTTIN): {seen[-400:]!r}")
            os.write(master, b"\x1a")  # Ctrl-Z
            if not wait_state(job, "T"):
                errors.append(f"2. Ctrl-Z did not stop the job (state {state(job)})")
            if not wait_state(wrapper, "T"):
                errors.append(f"2. the wrapper did not stop with its job (state {state(wrapper)})")
            os.kill(wrapper, signal.SIGCONT)  # `fg`
            if not wait_state(job, "RS"):
                errors.append(f"3. the job stayed stopped after the wrapper was continued (state {state(job)})")
            os.write(master, b"second\n")
            if not read_until(master, b"got second", 10):
                errors.append(f"3. after `fg` the job did not read the terminal (state {state(job)}): {seen[-400:]!r}")
            os.write(master, b"\x03")  # Ctrl-C
            if not read_until(master, b"command exited with 130", 30):
                errors.append(f"4. no summary ending 'command exited with 130' on the terminal: {seen[-1500:]!r}")
    finally:
        code = None
        end = time.monotonic() + 30
        while time.monotonic() < end:
            pid, st = os.waitpid(wrapper, os.WNOHANG)
            if pid == wrapper:
                code = os.waitstatus_to_exitcode(st)
                break
            read_until(master, b"\0never", 0.05)  # keep the terminal drained
        if code is None:
            for p in (wrapper, job):
                if p:
                    for t in sorted(glob.glob(f"/proc/{p}/task/*")):
                        try:
                            comm = open(t + "/comm").read().strip()
                            wchan = open(t + "/wchan").read().strip()
                            st = open(t + "/stat").read().rsplit(")", 1)[1].split()[0]
                            print(f"  pid {p} thread {os.path.basename(t)} {comm}: state {st}, wchan {wchan}")
                        except OSError:
                            pass
            for p in (wrapper, job):
                if p:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            os.waitpid(wrapper, 0)
            errors.append("the wrapper did not end within 30 s of Ctrl-C")
        elif code != 130:
            errors.append(f"4. the wrapper exited {code}, expected 130")
        os.close(master)
    reports = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    pids = []
    for r in reports:
        try:
            pids.append(json.load(open(r))["process"]["pid"])
        except (ValueError, KeyError) as e:
            errors.append(f"{os.path.basename(r)} is not a complete report: {e!r}")
    if job is not None and pids != [job]:
        errors.append(f"4. reports of pids {pids}, expected the job's {job}")
    print(f"wrapper exit {code}; reports of pids {pids}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: the job owns the terminal, Ctrl-Z stops job and wrapper, fg resumes both, Ctrl-C writes the report and exits 130")
sys.exit(1 if errors else 0)
