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

Ctrl-C is typed only once the job is blocked in its read of the terminal (/proc/<pid>/syscall),
as a person types it at a waiting prompt. Typed as soon as "got second" appeared, it hung the
test about 1 run in 8: the job was still between its print and the read, in the C code of
input(); CPython's handler only marks a SIGINT that lands there, the read that follows then
blocks with KeyboardInterrupt pending until a line arrives (plain python3 on a pty, no cudashim,
does the same 1 run in 100). Whatever step times out prints the step, the terminal output so
far and each thread's state, wchan, syscall and signals, for the wrapper and the job.
"""
import glob
import json
import os
import platform
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
step = "0. start the wrapper on the terminal"
# read(2)'s number, as /proc/<pid>/syscall shows it
READ_SYSCALL = {"x86_64": 0, "aarch64": 63, "ppc64le": 3, "s390x": 3, "riscv64": 63}[platform.machine()]


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


def wait_until(ready, timeout=10):
    """Polls ready() until it is true or `timeout` s passed; True when it became true."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if ready():
            return True
        time.sleep(0.005)
    return False


def wait_state(pid, letters, timeout=10):
    return wait_until(lambda: state(pid) in letters, timeout)


def reading_terminal(pid):
    """True when the job's main thread is blocked in read(2) of its stdin, the terminal."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            call = f.read().split()
    except OSError:
        return False
    return len(call) > 1 and call[0] == str(READ_SYSCALL) and int(call[1], 16) == 0


def proc_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return "?"


def picture(wrapper, job):
    """What a timed-out step saw: the step, the terminal output so far, each thread's state."""
    lines = [f"on step {step!r}; the terminal so far: {seen[-1500:]!r}"]
    for name, pid in (("wrapper", wrapper), ("job", job)):
        if not pid:
            lines.append(f"  {name}: not started")
            continue
        for t in sorted(glob.glob(f"/proc/{pid}/task/*")):
            stat = proc_text(t + "/stat").rsplit(")", 1)[-1].split()
            status = proc_text(t + "/status").splitlines()
            sig = " ".join(l.replace(":\t", " ") for l in status if l.startswith(("SigPnd", "ShdPnd", "SigBlk", "SigCgt")))
            lines.append(f"  {name} {pid} thread {os.path.basename(t)} {proc_text(t + '/comm')}: "
                         f"state {stat[0] if stat else '?'}, pgrp {stat[2] if stat else '?'}, "
                         f"terminal's foreground group {stat[5] if stat else '?'}, wchan {proc_text(t + '/wchan')}, "
                         f"syscall {proc_text(t + '/syscall').split(' ')[:2]}, {sig}")
        if not glob.glob(f"/proc/{pid}/task/*"):
            lines.append(f"  {name} {pid}: gone")
    return "\n".join(lines)


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="warn", NO_COLOR="1")
    env.pop("LD_PRELOAD", None)
    wrapper, master = pty.fork()
    if wrapper == 0:
        os.execve(cli, [cli, "run", "--out", out, "--", sys.executable, "-c", JOB], env)
    job = None

    def check(ok, what):
        """Ends the steps at the first one that failed, with what it saw."""
        if not ok:
            errors.append(f"{what}\n{picture(wrapper, job)}")
            raise TimeoutError(what)

    try:
        check(read_until(master, b" go", 30), "the job did not start")
        job = int(seen.split(b"ready", 1)[1].split()[0])
        step = "1. type a line: the job, in the foreground group, reads it"
        os.write(master, b"first\n")
        check(read_until(master, b"got first", 10),
              "1. the job did not read the terminal (a background group is stopped by SIGTTIN)")
        step = "2. Ctrl-Z: the job stops, the wrapper with it"
        os.write(master, b"\x1a")
        check(wait_state(job, "T"), "2. Ctrl-Z did not stop the job")
        check(wait_state(wrapper, "T"), "2. the wrapper did not stop with its job")
        step = "3. SIGCONT to the wrapper (`fg`): the job runs and reads the next line"
        os.kill(wrapper, signal.SIGCONT)
        check(wait_state(job, "RS"), "3. the job stayed stopped after the wrapper was continued")
        os.write(master, b"second\n")
        check(read_until(master, b"got second", 10), "3. after `fg` the job did not read the terminal")
        step = "4. Ctrl-C at the job's prompt: KeyboardInterrupt, report, summary, exit 130"
        check(wait_until(lambda: reading_terminal(job)), "4. the job never came back to its read of the terminal")
        os.write(master, b"\x03")
        check(read_until(master, b"command exited with 130", 30),
              "4. no summary ending 'command exited with 130' on the terminal")
    except TimeoutError:
        pass
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
            errors.append(f"the wrapper did not end within 30 s\n{picture(wrapper, job)}")
            for p in (wrapper, job):
                if p:
                    try:
                        os.kill(p, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
            os.waitpid(wrapper, 0)
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
