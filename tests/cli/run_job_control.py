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

Then the same job under an interactive bash on a terminal of its own (the wrapper a job of
the shell, in a group of its own): Ctrl-Z, `bg`, `fg`. After `bg` the wrapper and its job run
in the background: the terminal stays the shell's, the job's read stops it by SIGTTIN, and
the wrapper stops with it; `fg` gives the terminal back to the job, which reads the next line,
and Ctrl-C ends it with `$?` 130. (Before, the wrapper handed the terminal to the job whenever
it was continued, with SIGTTOU ignored: after `bg` the background job took the terminal from
the shell, whose next read of it failed (EIO); bash exited, and the job died with its session.)

Ctrl-C is typed only once the job is blocked in its read of the terminal (/proc/<pid>/syscall),
as a person types it at a waiting prompt. Typed as soon as "got second" appeared, it hung the
test about 1 run in 8: the job was still between its print and the read, in the C code of
input(); CPython's handler only marks a SIGINT that lands there, the read that follows then
blocks with KeyboardInterrupt pending until a line arrives (plain python3 on a pty, no cudashim,
does it too, 1 run in 300). Whatever step times out prints the step, the terminal output so
far and each thread's state, wchan, syscall and signals, for the wrapper and the job.
"""
import glob
import json
import os
import platform
import pty
import select
import shlex
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
    """True when the main thread of `pid` is blocked in read(2) of its stdin, the terminal
    (a process stopped inside that read shows the same call, in state T)."""
    if state(pid) != "S":
        return False
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


def picture(procs):
    """What a timed-out step saw: the step, the terminal output so far, each thread's state."""
    lines = [f"on step {step!r}; the terminal so far: {seen[-1500:]!r}"]
    for name, pid in procs.items():
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


def foreground_group(pid):
    """The foreground process group of `pid`'s terminal (/proc/<pid>/stat's tpgid), or None."""
    stat = proc_text(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
    return int(stat[5]) if len(stat) > 5 else None


def parent(pid):
    stat = proc_text(f"/proc/{pid}/stat").rsplit(")", 1)[-1].split()
    return int(stat[1]) if len(stat) > 1 else None


def check(ok, what, procs):
    """Ends a scenario's steps at the first one that failed, with what it saw."""
    if not ok:
        errors.append(f"{what}\n{picture(procs)}")
        raise TimeoutError(what)


def end_of(leader, master, procs):
    """Waits for the terminal's session leader (30 s, the terminal drained); its exit code, or
    None after a picture and SIGKILL to every process of the scenario."""
    end = time.monotonic() + 30
    while time.monotonic() < end:
        pid, st = os.waitpid(leader, os.WNOHANG)
        if pid == leader:
            return os.waitstatus_to_exitcode(st)
        read_until(master, b"\0never", 0.05)
    errors.append(f"{next(iter(procs))} did not end within 30 s\n{picture(procs)}")
    for p in procs.values():
        if p:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    os.waitpid(leader, 0)
    return None


def check_reports(out, job):
    """The job's one complete report, and no other."""
    reports = [f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json")]
    pids = []
    for r in reports:
        try:
            pids.append(json.load(open(r))["process"]["pid"])
        except (ValueError, KeyError) as e:
            errors.append(f"{os.path.basename(r)} is not a complete report: {e!r}")
    if job is not None and pids != [job]:
        errors.append(f"4. reports of pids {pids}, expected the job's {job}")
    return pids


with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out")
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="warn", NO_COLOR="1")
    env.pop("LD_PRELOAD", None)
    wrapper, master = pty.fork()
    if wrapper == 0:
        os.execve(cli, [cli, "run", "--out", out, "--", sys.executable, "-c", JOB], env)
    job = None
    procs = lambda: {"wrapper": wrapper, "job": job}  # noqa: E731
    try:
        check(read_until(master, b" go", 30), "the job did not start", procs())
        job = int(seen.split(b"ready", 1)[1].split()[0])
        step = "1. type a line: the job, in the foreground group, reads it"
        os.write(master, b"first\n")
        check(read_until(master, b"got first", 10),
              "1. the job did not read the terminal (a background group is stopped by SIGTTIN)", procs())
        step = "2. Ctrl-Z: the job stops, the wrapper with it"
        os.write(master, b"\x1a")
        check(wait_state(job, "T"), "2. Ctrl-Z did not stop the job", procs())
        check(wait_state(wrapper, "T"), "2. the wrapper did not stop with its job", procs())
        step = "3. SIGCONT to the wrapper (`fg`): the job runs and reads the next line"
        os.kill(wrapper, signal.SIGCONT)
        check(wait_state(job, "RS"), "3. the job stayed stopped after the wrapper was continued", procs())
        os.write(master, b"second\n")
        check(read_until(master, b"got second", 10), "3. after `fg` the job did not read the terminal", procs())
        step = "4. Ctrl-C at the job's prompt: KeyboardInterrupt, report, summary, exit 130"
        check(wait_until(lambda: reading_terminal(job)), "4. the job never came back to its read of the terminal", procs())
        os.write(master, b"\x03")
        check(read_until(master, b"command exited with 130", 30),
              "4. no summary ending 'command exited with 130' on the terminal", procs())
    except TimeoutError:
        pass
    finally:
        code = end_of(wrapper, master, procs())
        if code not in (None, 130):
            errors.append(f"4. the wrapper exited {code}, expected 130")
        os.close(master)
    pids = check_reports(out, job)
    print(f"wrapper exit {code}; reports of pids {pids}")

# The same job at an interactive bash: Ctrl-Z, `bg`, `fg`, Ctrl-C.
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out")
    seen = b""
    step = "0. start bash on the terminal"
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="warn", NO_COLOR="1",
               PS1="shell$ ", JOBSRC=JOB, HISTFILE="/dev/null", TERM="dumb")
    env.pop("LD_PRELOAD", None)
    bash, master = pty.fork()
    if bash == 0:
        os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "--noediting", "-i"], env)
    wrapper = job = None
    procs = lambda: {"bash": bash, "wrapper": wrapper, "job": job}  # noqa: E731
    at_prompt = lambda: reading_terminal(bash) and foreground_group(bash) == bash  # noqa: E731
    try:
        check(read_until(master, b"shell$ ", 30) and wait_until(at_prompt), "bash did not start", procs())
        step = "1. the command at the shell's prompt; the job reads a line"
        os.write(master, f'{shlex.quote(cli)} run --out {shlex.quote(out)} -- {shlex.quote(sys.executable)} -c "$JOBSRC"\n'.encode())
        check(read_until(master, b" go\r\n", 30), "1. the job did not start", procs())
        job = int(seen.rsplit(b"ready", 1)[1].split()[0])
        wrapper = parent(job)
        os.write(master, b"first\n")
        check(read_until(master, b"got first", 10), "1. the job did not read the terminal", procs())
        step = "2. Ctrl-Z: job and wrapper stop, bash is back at its prompt with the terminal"
        os.write(master, b"\x1a")
        check(wait_until(lambda: state(job) == "T" and state(wrapper) == "T" and at_prompt()),
              "2. Ctrl-Z did not stop job and wrapper, or bash did not get the terminal back", procs())
        step = "3. `bg`: the terminal stays the shell's; the job's read stops it (SIGTTIN), the wrapper with it"
        # "bg 42" is printed once the builtin has continued the wrapper (the echo of the line
        # shows "$((40+2))"); a wrapper in state T after that has stopped again.
        os.write(master, b'bg; echo "bg $((40+2))"\n')
        check(read_until(master, b"bg 42", 10), "3. bash did not run `bg`", procs())
        check(wait_until(lambda: at_prompt() and (foreground_group(bash) != bash or
                                                  (state(job) == "T" and state(wrapper) == "T"))),
              "3. after `bg` bash did not come back to its prompt, or job and wrapper did not stop again", procs())
        check(foreground_group(bash) == bash and state(job) == "T",
              "3. after `bg` the terminal is not the shell's (the wrapper gave it to its background job)", procs())
        step = "4. `fg`: the job gets the terminal and reads the next line"
        os.write(master, b"fg\n")
        check(wait_until(lambda: foreground_group(bash) == job and reading_terminal(job)),
              "4. after `fg` the job did not get the terminal back", procs())
        os.write(master, b"second\n")
        check(read_until(master, b"got second", 10), "4. after `fg` the job did not read the terminal", procs())
        step = "5. Ctrl-C at the job's prompt: summary, `$?` 130 at the shell"
        check(wait_until(lambda: reading_terminal(job)), "5. the job never came back to its read of the terminal", procs())
        os.write(master, b"\x03")
        check(read_until(master, b"command exited with 130", 30) and wait_until(at_prompt),
              "5. no summary ending 'command exited with 130', or bash did not get its prompt back", procs())
        os.write(master, b'echo "status $?"; exit\n')
        check(read_until(master, b"status 130", 10), "5. `$?` is not 130 at the shell", procs())
    except TimeoutError:
        pass
    finally:
        code = end_of(bash, master, procs())
        os.close(master)
    pids = check_reports(out, job)
    print(f"in bash: reports of pids {pids}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: the job owns the terminal, Ctrl-Z stops job and wrapper, fg resumes both, Ctrl-C writes the report and exits 130; "
          "in bash, after `bg` the terminal stays the shell's and `fg` gives it back to the job")
sys.exit(1 if errors else 0)
