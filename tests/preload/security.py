#!/usr/bin/env python3
"""security.py SHIM FAKECUDA_DIR PROG: output files in a shared folder cannot be redirected or read.

1. Every file the shim writes (report, event stream, trace) is mode 0600.
2. Another user's symbolic links planted at every name the process will write
   (the names are predictable: host and pid), pointing at a file of the victim: the
   shim follows none of them (O_NOFOLLOW, O_EXCL; the report goes through a temporary
   name and a rename), the target is unchanged, and the job ends as without the shim.
3. No environment value is copied into the outputs except the CUDA, NCCL and PyTorch
   settings they report on: a secret in an unrelated variable appears nowhere.
PROG is tests/progs/version_probe.
"""
import glob
import os
import socket
import stat
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
lib = os.path.join(fake, "cudnn", "libcudnn_graph.so.9")
errors = []
SECRET = "s3cr3t-token-7f9c2e"


def env_for(out):
    return dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="warn",
                MY_API_TOKEN=SECRET, CUDA_LAUNCH_BLOCKING="0")


with tempfile.TemporaryDirectory() as out:
    p = subprocess.run([prog, lib, "1.2"], env=env_for(out), capture_output=True, text=True, timeout=60)
    files = sorted(glob.glob(os.path.join(out, "*")))
    kinds = {os.path.splitext(f)[1] for f in files}
    if p.returncode != 0 or not {".json", ".ndjson"} <= kinds:
        errors.append(f"plain run: exit {p.returncode}, files {files}: {p.stderr[-300:]}")
    for f in files:
        mode = stat.S_IMODE(os.stat(f).st_mode)
        if mode & 0o077:
            errors.append(f"{os.path.basename(f)}: mode {oct(mode)}, expected 0600")
        if SECRET.encode() in open(f, "rb").read():
            errors.append(f"{os.path.basename(f)}: contains the value of MY_API_TOKEN")
    if SECRET in p.stderr or SECRET in p.stdout:
        errors.append("the log lines contain the value of MY_API_TOKEN")
    print(f"plain run: {[os.path.basename(f) for f in files]}, modes ok, no secret")

with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as home:
    victim = os.path.join(home, "victim.txt")
    with open(victim, "w") as f:
        f.write("precious\n")
    # The child waits on a pipe until the links exist, then execs PROG (same pid).
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.read(r, 1)
        os.execve(prog, [prog, lib, "1.2"], env_for(out))
    os.close(r)
    host = socket.gethostname().split(".")[0]
    base = os.path.join(out, f"cudashim-{host}-{pid}")
    names = [base + ext for ext in (".json", ".ndjson", ".trace", "-crash.json", ".json.tmp." + str(pid),
                                    ".trace.tmp." + str(pid))]
    for n in names:
        os.symlink(victim, n)
    os.write(w, b"x")
    os.close(w)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        errors.append(f"with planted links: exit {code}, expected 0")
    if open(victim).read() != "precious\n":
        errors.append("the victim file was written through a planted link")
    followed = [os.path.basename(n) for n in names if not os.path.islink(n)]
    unchanged = open(victim).read() == "precious\n"
    print(f"planted links: exit {code}, victim unchanged: {unchanged}, names no longer links: {followed}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: outputs are 0600, planted links are not followed, no unrelated environment value is copied")
sys.exit(1 if errors else 0)
