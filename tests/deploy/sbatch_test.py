#!/usr/bin/env python3
"""sbatch_test.py SBATCH: deploy/slurm/train.sbatch, run as sbatch would run it on the first
node (SLURM_* set, the submit folder as working folder) with a stand-in `srun` that records
its arguments and a stand-in CLI: srun gets --export=ALL,LD_PRELOAD=<shim>[:<own>],
CUDASHIM_OUT=<submit>/cudashim-<job> (never a second shim), the folder exists with mode
0700, the script exits with srun's status and still summarizes, and it refuses a missing
library."""
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

script = os.path.abspath(sys.argv[1])
failures = []
tmp = tempfile.mkdtemp(prefix="cudashim-sbatch-")
home = os.path.join(tmp, "cudashim")
lib = os.path.join(home, "cudashim/lib/libcudashim.so")
cli = os.path.join(home, "cudashim/bin/cudashim")
os.makedirs(os.path.dirname(lib))
os.makedirs(os.path.dirname(cli))
open(lib, "w").close()
bindir = os.path.join(tmp, "bin")
os.mkdir(bindir)
log = os.path.join(tmp, "calls")
# Each stand-in appends one line to the log: its arguments, tab-separated.
for path, status in ((os.path.join(bindir, "srun"), '"${FAKE_SRUN_STATUS:-0}"'), (cli, "0")):
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\t" "$a"; done >>{shlex.quote(log)}\n'
                f'printf "\\n" >>{shlex.quote(log)}\nexit {status}\n')
    os.chmod(path, 0o755)
submit = os.path.join(tmp, "submit")
os.mkdir(submit)


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ' ' + detail}")
    if not cond:
        failures.append(name)
    return cond


def run(env):
    if os.path.exists(log):
        os.remove(log)
    full = {"PATH": f"{bindir}:/usr/bin:/bin", "HOME": tmp, "SLURM_JOB_ID": "777", "SLURM_SUBMIT_DIR": submit}
    full.update(env)
    full = {k: v for k, v in full.items() if v is not None}
    p = subprocess.run(["/bin/bash", script, "--epochs", "1"], env=full, cwd=submit, capture_output=True, text=True)
    calls = []
    if os.path.exists(log):
        calls = [line.rstrip("\t").split("\t") for line in open(log).read().splitlines()]
    return p, calls


out = os.path.join(submit, "cudashim-777")
p, calls = run({})
check("srun gets the shim and the job's folder in --export, the job's arguments after the command",
      p.returncode == 0 and calls and calls[0] == ["--export=ALL,LD_PRELOAD=" + lib + ",CUDASHIM_OUT=" + out,
                                                   "python3", "train.py", "--epochs", "1"],
      f"exit {p.returncode} {p.stderr!r} {calls}")
check("the folder exists before any task, mode 0700", os.path.isdir(out) and stat.S_IMODE(os.stat(out).st_mode) == 0o700)
check("the CLI summarizes the folder at the end", len(calls) == 2 and calls[1] == ["report", out], str(calls))

p, calls = run({"LD_PRELOAD": "/usr/lib/libfoo.so"})
check("the job's own LD_PRELOAD stays after the shim",
      calls and calls[0][0] == f"--export=ALL,LD_PRELOAD={lib}:/usr/lib/libfoo.so,CUDASHIM_OUT={out}", str(calls))

prolog_lib = "/opt/cudashim/site/cudashim/lib/libcudashim.so"
p, calls = run({"LD_PRELOAD": f"{prolog_lib}:/usr/lib/libfoo.so"})
check("a shim already in LD_PRELOAD (a TaskProlog's): no second one",
      calls and calls[0][0] == f"--export=ALL,LD_PRELOAD={prolog_lib}:/usr/lib/libfoo.so,CUDASHIM_OUT={out}", str(calls))

p, calls = run({"FAKE_SRUN_STATUS": "3"})
check("the job's exit status is srun's, and the summary still runs", p.returncode == 3 and len(calls) == 2,
      f"exit {p.returncode} {calls}")

p, calls = run({"CUDASHIM_LIB": os.path.join(tmp, "none/libcudashim.so")})
check("a missing library: refused before srun, with a message", p.returncode == 1 and not calls and "no cudashim library" in p.stderr,
      f"exit {p.returncode} {p.stderr!r} {calls}")

shutil.rmtree(tmp)
if failures:
    print(f"FAIL: {len(failures)} case(s): {failures}")
    sys.exit(1)
print("ok: train.sbatch hands srun what it should")
