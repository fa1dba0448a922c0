#!/usr/bin/env python3
"""outputs.py SHIM FAKECUDA_DIR CRASH: an output never replaces what it did not create (issue 22, items 3 and 7).

1. cudashim_write_report(path) over things it must leave alone: a FIFO, a symbolic link to
   a victim file, the user's own regular file, a character device (mknod 1,3: /dev/null's
   numbers, in a temporary folder; as root only), a folder. Each call returns -EEXIST and
   the thing is unchanged. A new path gets a 0600 report; a second call on the same path
   replaces the process's own report. No temporary file is left.
2. Two processes with the same host and pid into one folder (pid 1 in two PID namespaces,
   as two containers sharing a volume): both reports are there, each complete; the
   second's outputs carry its start time (-t<ms>), the first's are untouched.
3. An earlier process's outputs under this process's names (planted before it starts, one
   of them mode 0666 at the crash record's name): none is touched, this process's outputs
   (a crash record among them, from a SIGSEGV) go under the -t<ms> name, each 0600.
"""
import errno
import glob
import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile

shim, fake, crash_prog = sys.argv[1:4]
errors = []
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="warn")
EEXIST = -errno.EEXIST

API_JOB = r"""
import ctypes, json, sys
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
write = ctypes.CDLL(None).cudashim_write_report
write.argtypes = [ctypes.c_char_p]
print(json.dumps({p: write(p.encode()) for p in sys.argv[1:]}))
"""


def files(folder):
    return sorted(os.listdir(folder))


# 1. the C API target
with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as work:
    fifo, link, mine, dev, folder, new = (os.path.join(work, n) for n in
                                          ("fifo", "link.json", "mine.json", "null", "folder", "new.json"))
    victim = os.path.join(work, "victim.txt")
    open(victim, "w").write("precious\n")
    os.mkfifo(fifo)
    os.symlink(victim, link)
    open(mine, "w").write("the user's own file\n")
    os.mkdir(folder)
    targets = [fifo, link, mine, folder]
    if os.geteuid() == 0:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append(dev)
    p = subprocess.run([sys.executable, "-c", API_JOB, *targets, new, new], env=dict(env0, CUDASHIM_OUT=out),
                       capture_output=True, text=True, timeout=60)
    rcs = json.loads(p.stdout) if p.returncode == 0 else {}
    if p.returncode != 0:
        errors.append(f"API job: exit {p.returncode}: {p.stderr[-800:]}")
    for t in targets:
        if rcs.get(t) != EEXIST:
            errors.append(f"cudashim_write_report({os.path.basename(t)}) returned {rcs.get(t)}, expected {EEXIST}")
    kinds = {fifo: stat.S_ISFIFO, link: stat.S_ISLNK, mine: stat.S_ISREG, folder: stat.S_ISDIR, dev: stat.S_ISCHR}
    for t in targets:
        if not kinds[t](os.lstat(t).st_mode):
            errors.append(f"{os.path.basename(t)} was replaced: mode {oct(os.lstat(t).st_mode)}")
    if open(victim).read() != "precious\n" or open(mine).read() != "the user's own file\n":
        errors.append("a file behind a link or the user's own file was written")
    if rcs.get(new) != 0 or not os.path.isfile(new) or stat.S_IMODE(os.stat(new).st_mode) != 0o600:
        errors.append(f"new path: returned {rcs.get(new)}, exists {os.path.exists(new)}")
    elif json.load(open(new))["schema"] != "cudashim.report/1":
        errors.append("new path: not a report")
    stray = [f for f in files(work) + files(out) if ".tmp" in f]
    if stray:
        errors.append(f"temporary files left: {stray}")
    print(f"C API: {({os.path.basename(k): v for k, v in rcs.items()})}; left alone: "
          f"{[os.path.basename(t) for t in targets]}; folder: {files(out)}")

# 2. pid 1 twice (two PID namespaces), one folder
if shutil.which("unshare") and subprocess.run(["unshare", "-p", "-f", "true"]).returncode == 0:
    with tempfile.TemporaryDirectory() as out:
        job = "import ctypes; c = ctypes.CDLL('libcuda.so.1'); [c.cuInit(0) for _ in range(N)]"
        for n in (3, 5):
            p = subprocess.run(["unshare", "-p", "-f", sys.executable, "-c", job.replace("N", str(n))],
                               env=dict(env0, CUDASHIM_OUT=out), capture_output=True, text=True, timeout=60)
            if p.returncode != 0:
                errors.append(f"pid-1 run {n}: exit {p.returncode}: {p.stderr[-500:]}")
        reports = sorted(f for f in glob.glob(os.path.join(out, "cudashim-*.json")) if not f.endswith("-crash.json"))
        calls = sorted(json.load(open(r))["api"]["cuInit"]["calls"] for r in reports)
        if calls != [3, 5]:
            errors.append(f"two pid-1 processes: reports with cuInit calls {calls}, expected [3, 5]: {files(out)}")
        streams = glob.glob(os.path.join(out, "*.ndjson"))
        if len(streams) != 2:
            errors.append(f"two pid-1 processes: {len(streams)} streams")
        print(f"two processes with pid 1: {files(out)}; cuInit calls {calls}")
else:
    print("two processes with pid 1: skipped (no unshare -p here)")

# 3. an earlier process's outputs at this process's names; a crash record among the new ones
with tempfile.TemporaryDirectory() as out:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os.execve(crash_prog, [crash_prog, "segv"], dict(env0, CUDASHIM_OUT=out))
    os.close(r)
    base = os.path.join(out, f"cudashim-{socket.gethostname()}-{pid}")
    planted = {base + s: f"earlier process {s}\n" for s in (".json", ".ndjson", ".trace", "-crash.json")}
    for path, text in planted.items():
        open(path, "w").write(text)
    os.chmod(base + "-crash.json", 0o666)
    os.write(w, b"x")
    os.close(w)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != -11:
        errors.append(f"planted outputs: the program ended {code}, expected -11 (SIGSEGV)")
    for path, text in planted.items():
        if open(path).read() != text:
            errors.append(f"{os.path.basename(path)}: the earlier process's file was overwritten")
    if stat.S_IMODE(os.stat(base + "-crash.json").st_mode) != 0o666:
        errors.append("the planted crash record's mode changed")
    new = sorted(set(files(out)) - {os.path.basename(p) for p in planted})
    want = {"-crash.json", ".ndjson"}
    got = {s for s in want for f in new if f.endswith(s) and "-t" in f}
    if got != want:
        errors.append(f"this process's crash record and stream are not under a -t<ms> name: {new}")
    for f in new:
        if stat.S_IMODE(os.stat(os.path.join(out, f)).st_mode) != 0o600:
            errors.append(f"{f}: mode {oct(stat.S_IMODE(os.stat(os.path.join(out, f)).st_mode))}, expected 0600")
    kept = sum(open(p).read() == t for p, t in planted.items())
    print(f"planted outputs: exit {code}; {kept} of {len(planted)} earlier files untouched; new files {new}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: no output replaced anything it did not create; same host and pid never share a name")
sys.exit(1 if errors else 0)
