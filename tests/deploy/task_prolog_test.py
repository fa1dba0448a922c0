#!/usr/bin/env python3
"""task_prolog_test.py PROLOG: deploy/slurm/task_prolog.sh, run the way slurmstepd runs it
(the task's environment, its stdout read as "export NAME=value" / "unset NAME" lines), with
fake SLURM_* variables, prints exactly the expected lines: the shim put first in
LD_PRELOAD, the job's own entries after it, never a second shim; CUDASHIM_OUT per job, step
and rank; the opt-outs; nothing at all when it cannot be sure. It always exits 0 and writes
nothing on stderr (slurmstepd closes it)."""
import os
import pwd
import shutil
import stat
import subprocess
import sys
import tempfile

prolog = os.path.abspath(sys.argv[1])
failures = []
tmp = tempfile.mkdtemp(prefix="cudashim-prolog-")
os.chmod(tmp, 0o755)
lib = os.path.join(tmp, "site/cudashim/lib/libcudashim.so")
os.makedirs(os.path.dirname(lib))
open(lib, "w").close()
base = os.path.join(tmp, "out")
os.mkdir(base)
os.chmod(base, 0o1777)
user = pwd.getpwuid(os.getuid()).pw_name
mine = os.path.join(base, user)

SLURM = {"SLURM_JOB_ID": "4242", "SLURM_STEP_ID": "0", "SLURM_PROCID": "3"}


def run(name, env, expected, shell="/bin/sh"):
    full = {"PATH": "/usr/bin:/bin", "HOME": tmp, "CUDASHIM_LIB": lib, "CUDASHIM_SLURM_OUT_BASE": base}
    full.update(env)
    for k in [k for k, v in full.items() if v is None]:
        del full[k]
    p = subprocess.run([shell, prolog], env=full, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    got = p.stdout.splitlines()
    # The loader's own complaints about the fake LD_PRELOAD entries, printed as it starts the
    # shell (before the script runs), are not the script's.
    stderr = [l for l in p.stderr.splitlines() if not (l.startswith("ERROR: ld.so: object ") and "cannot be preloaded" in l)]
    ok = p.returncode == 0 and got == expected and not stderr
    print(f"{'ok' if ok else 'FAIL'}: {name}")
    if not ok:
        failures.append(name)
        print(f"  exit {p.returncode}, stderr {p.stderr!r}")
        print(f"  expected {expected}")
        print(f"  got      {got}")
    return p


def out_of(job="4242", step="0", rank="3"):
    return f"export CUDASHIM_OUT={mine}/job-{job}/step-{step}/rank-{rank}"


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ' ' + detail}")
    if not cond:
        failures.append(name)
    return cond


# --- the shim goes in
run("a task without LD_PRELOAD gets the shim and its rank's folder", SLURM, [f"export LD_PRELOAD={lib}", out_of()])
check("<base>/<user> is 0700 and the user's", stat.S_IMODE(os.stat(mine).st_mode) == 0o700 and os.stat(mine).st_uid == os.getuid(),
      oct(os.stat(mine).st_mode))
step_dir = os.path.join(mine, "job-4242/step-0")
check("the job and step folders exist, 0700", stat.S_IMODE(os.stat(step_dir).st_mode) == 0o700
      and stat.S_IMODE(os.stat(os.path.join(mine, "job-4242")).st_mode) == 0o700)
check("the rank folder is left to the shim (made at the first CUDA call)", not os.path.exists(os.path.join(step_dir, "rank-3")))
run("the task's own LD_PRELOAD stays after the shim", {**SLURM, "LD_PRELOAD": "/usr/lib/libfoo.so"},
    [f"export LD_PRELOAD={lib}:/usr/lib/libfoo.so", out_of()])
run("an LD_PRELOAD of two entries, colon and space, is kept as it was", {**SLURM, "LD_PRELOAD": "/a/liba.so:/b/libb.so /c/libc.so"},
    [f"export LD_PRELOAD={lib}:/a/liba.so:/b/libb.so /c/libc.so", out_of()])
run("each rank gets its own folder", {**SLURM, "SLURM_PROCID": "17"}, [f"export LD_PRELOAD={lib}", out_of(rank="17")])
run("each step gets its own folder", {**SLURM, "SLURM_STEP_ID": "5", "SLURM_PROCID": "0"},
    [f"export LD_PRELOAD={lib}", out_of(step="5", rank="0")])
run("the batch script (no SLURM_STEP_ID) is step 'batch', rank 0 by default",
    {"SLURM_JOB_ID": "4242"}, [f"export LD_PRELOAD={lib}", out_of(step="batch", rank="0")])
run("bash runs it the same", SLURM, [f"export LD_PRELOAD={lib}", out_of()], shell="/bin/bash")

# --- never a second shim; a step inherits the batch step's
run("a step that inherits the shim from the batch step: LD_PRELOAD left alone, its own folder",
    {**SLURM, "LD_PRELOAD": f"{lib}:/usr/lib/libfoo.so", "CUDASHIM_OUT": f"{mine}/job-4242/step-batch/rank-0"}, [out_of()])
run("the user's own libcudashim.so (another path): no second shim",
    {**SLURM, "LD_PRELOAD": "/home/u/venv/site/cudashim/lib/libcudashim.so"}, [out_of()])
run("a name that only ends like the shim is not the shim", {**SLURM, "LD_PRELOAD": "/x/notlibcudashim.so"},
    [f"export LD_PRELOAD={lib}:/x/notlibcudashim.so", out_of()])
run("a CUDASHIM_OUT the user chose (outside the base) is kept", {**SLURM, "CUDASHIM_OUT": "/scratch/u/run1"},
    [f"export LD_PRELOAD={lib}"])

# --- opting out
run("CUDASHIM_NO_PRELOAD=1: nothing", {**SLURM, "CUDASHIM_NO_PRELOAD": "1"}, [])
run("CUDASHIM_NO_PRELOAD=yes: nothing", {**SLURM, "CUDASHIM_NO_PRELOAD": "yes"}, [])
run("CUDASHIM_NO_PRELOAD=0 does not opt out", {**SLURM, "CUDASHIM_NO_PRELOAD": "0"}, [f"export LD_PRELOAD={lib}", out_of()])
run("CUDASHIM_DISABLE=1: nothing", {**SLURM, "CUDASHIM_DISABLE": "1"}, [])
run("opted out, the task's own LD_PRELOAD untouched", {**SLURM, "CUDASHIM_NO_PRELOAD": "1", "LD_PRELOAD": "/usr/lib/libfoo.so"}, [])
run("opted out in a step: the batch step's shim is taken out, the rest stays",
    {**SLURM, "CUDASHIM_NO_PRELOAD": "1", "LD_PRELOAD": f"{lib}:/usr/lib/libfoo.so"}, ["export LD_PRELOAD=/usr/lib/libfoo.so"])
run("opted out in a step: the shim alone goes with an unset", {**SLURM, "CUDASHIM_NO_PRELOAD": "1", "LD_PRELOAD": lib},
    ["unset LD_PRELOAD"])

# --- nothing it is not sure of
run("no library at CUDASHIM_LIB: nothing", {**SLURM, "CUDASHIM_LIB": os.path.join(tmp, "missing/libcudashim.so")}, [])
run("a relative CUDASHIM_LIB: nothing", {**SLURM, "CUDASHIM_LIB": "libcudashim.so"}, [])
run("no base folder: the shim but no CUDASHIM_OUT", {**SLURM, "CUDASHIM_SLURM_OUT_BASE": os.path.join(tmp, "nobase")},
    [f"export LD_PRELOAD={lib}"])
check("a missing base is not made by the task", not os.path.exists(os.path.join(tmp, "nobase")))
run("a job id that is not an id: no CUDASHIM_OUT", {**SLURM, "SLURM_JOB_ID": "../../etc"}, [f"export LD_PRELOAD={lib}"])
run("no SLURM_JOB_ID: no CUDASHIM_OUT", {"SLURM_PROCID": "0"}, [f"export LD_PRELOAD={lib}"])
run("an LD_PRELOAD too long for slurmstepd's 4 KiB lines: nothing", {**SLURM, "LD_PRELOAD": "/x/" + "a" * 4100 + ".so"}, [])
base2 = os.path.join(tmp, "out2")
os.mkdir(base2)
os.chmod(base2, 0o1777)
os.symlink(tmp, os.path.join(base2, user))
run("<base>/<user> a symbolic link (someone else's trap): no CUDASHIM_OUT", {**SLURM, "CUDASHIM_SLURM_OUT_BASE": base2},
    [f"export LD_PRELOAD={lib}"])
if os.getuid() == 0:
    base3 = os.path.join(tmp, "out3")
    os.mkdir(base3)
    os.chmod(base3, 0o1777)
    os.mkdir(os.path.join(base3, user))
    os.chown(os.path.join(base3, user), 65534, 65534)
    run("<base>/<user> made first by another user: no CUDASHIM_OUT", {**SLURM, "CUDASHIM_SLURM_OUT_BASE": base3},
        [f"export LD_PRELOAD={lib}"])
else:
    print("skip: <base>/<user> owned by another user (needs root to make one)")

# --- the lines as slurmstepd applies them (src/slurmd/slurmstepd/task.c, _proc_stdout: the
# value is the rest of the line, unquoted): the task's environment comes out right
def apply(lines, env):
    env = dict(env)
    for line in lines:
        if line.startswith("export "):
            name, _, value = line[7:].lstrip().partition("=")
            env[name.rstrip()] = value
        elif line.startswith("unset "):
            env.pop(line[6:].strip(), None)
    return env


task = {**SLURM, "LD_PRELOAD": "/a/liba.so /b/lib b.so"}
p = run("an LD_PRELOAD with spaces", task, [f"export LD_PRELOAD={lib}:/a/liba.so /b/lib b.so", out_of()])
env = apply(p.stdout.splitlines(), task)
check("applied, the task's LD_PRELOAD is the shim then its own, byte for byte",
      env["LD_PRELOAD"] == f"{lib}:/a/liba.so /b/lib b.so", repr(env["LD_PRELOAD"]))
p = run("opted out after the batch step", {**SLURM, "CUDASHIM_NO_PRELOAD": "1", "LD_PRELOAD": lib}, ["unset LD_PRELOAD"])
check("applied, the task has no LD_PRELOAD", "LD_PRELOAD" not in apply(p.stdout.splitlines(), {"LD_PRELOAD": lib}))
shutil.rmtree(tmp)
if failures:
    print(f"FAIL: {len(failures)} case(s): {failures}")
    sys.exit(1)
print("ok: the TaskProlog prints exactly the expected lines")
