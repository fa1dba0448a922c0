#!/usr/bin/env python3
"""screen.py CLI SHIM FAKECUDA_DIR CUDART_SONAME: the summary a person reads fits one screen
(issue 33 item 5).

1. A realistic job under `cudashim run` (tests/cli/screen_job.py through `bash -c`: several
   CUDA libraries, a loop with a priced finding, a shell, a helper command and a forked worker
   that make no CUDA call, no GPU time): the summary is at most 25 lines and holds the headline,
   the finding with its price, memory, the libraries in one line and the processes that made
   no CUDA call in one line, the probe that only loaded libcuda (a report with no call) among
   them ("4 processes made no CUDA call: python3 (2), bash (1), sh (1) (1 of them only loaded
   the driver: ...)"). `cudashim report` on the folder says the same line and --verbose gives
   the probe its section; --json has the count of those that left no report.
2. Without `cudashim run` (a node-wide preload) a process that makes no CUDA call writes nothing.
3. A refused setting (a locked policy file, the environment asking to loosen it) is one line of
   the summary naming the setting, the value asked for, where from, why and what was kept.
4. The cudashim-<host>.no-cuda files are read as hostile (a bad line, a cut line, a FIFO).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import screen_check  # noqa: E402

cli, shim, fake, soname = sys.argv[1:5]
job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "screen_job.py")
py = sys.executable
errors = []
base_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
# GPU time absent: the NVML double in FAKECUDA_DIR would otherwise be sampled.
base_env.update(LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, FAKECUDA_SYNC_DELAY_US="2000", NO_COLOR="1",
                CUDASHIM_GPU_SAMPLING="0")

with tempfile.TemporaryDirectory() as d:
    # 1. the job, its summary, `cudashim report` on its folder
    out = os.path.join(d, "run")
    p = subprocess.run([cli, "run", "--out", out, "--", "bash", "-c", f'echo preparing; "{py}" "{job}" "{fake}" "{soname}"; exit $?'],
                       env=base_env, capture_output=True, text=True, timeout=120)
    lines = screen_check.summary_of(p.stderr)
    print(f"--- the summary ({len(lines)} lines; the job exited {p.returncode}):")
    print("\n".join(lines))
    if p.returncode != 0 or "60 steps done" not in p.stdout:
        errors.append(f"the job failed under cudashim run (exit {p.returncode}): {p.stderr[-600:]}")
    parts = [screen_check.HEADLINE, screen_check.FINDING, screen_check.MEMORY, screen_check.LIBRARIES,
             screen_check.NO_CUDA]
    errors += screen_check.problems(lines, parts)
    no_cuda = [l for l in lines if re.search(screen_check.NO_CUDA[1], l)]
    py_name = os.path.basename(py)
    want = "4 processes made no CUDA call: "
    if no_cuda and not (no_cuda[0].startswith(want) and "bash (1)" in no_cuda[0] and " sh (1)" in no_cuda[0]
                        and f"{py_name} (2)" in no_cuda[0]
                        and no_cuda[0].endswith("(1 of them only loaded the driver: --verbose shows its report)")):
        errors.append(f"expected '{want}{py_name} (2), bash (1), sh (1) (1 of them only loaded the driver: ...)' (the "
                      f"shell, the forked worker, the probe, the helper), got {no_cuda[0]!r}")
    if sum(1 for l in lines if l.startswith("process ")) != 1:
        errors.append("a process that made no CUDA call has a section of its own (the probe's report)")
    if any(re.match(r"process \d+.*: (bash|sh)$", l.strip()) for l in lines):
        errors.append("a process that made no CUDA call has a section of its own")
    r = subprocess.run([cli, "report", out], env=base_env, capture_output=True, text=True, timeout=60)
    if not no_cuda or no_cuda[0] not in r.stdout.splitlines():
        errors.append(f"`cudashim report` on the folder lacks the no-CUDA line: {r.stdout[-400:]}")
    v = subprocess.run([cli, "report", "--verbose", out], env=base_env, capture_output=True, text=True, timeout=60)
    if sum(1 for l in v.stdout.splitlines() if l.startswith("process ")) != 2 or "  0 hooked calls" not in v.stdout \
            or "3 processes made no CUDA call: " not in v.stdout:
        errors.append(f"`cudashim report --verbose` does not give the probe its section: {v.stdout[-600:]}")
    j = subprocess.run([cli, "report", "--json", out], env=base_env, capture_output=True, text=True, timeout=60)
    try:
        got = json.loads(j.stdout).get("no_cuda_processes", {})
    except ValueError:
        got = {}
    if got.get("count") != 3:
        errors.append(f"`cudashim report --json` no_cuda_processes is {got!r}, expected a count of 3")

    # 2. node-wide: the shim preloaded without `cudashim run`, no CUDA call: nothing written
    quiet = os.path.join(d, "quiet")
    os.makedirs(quiet)
    q = subprocess.run(["bash", "-c", "true; sh -c true"], env=dict(base_env, LD_PRELOAD=shim, CUDASHIM_OUT=quiet),
                       capture_output=True, text=True, timeout=60)
    if os.listdir(quiet) or q.stderr or q.returncode != 0:
        errors.append(f"a process with no CUDA call and no `cudashim run` left {os.listdir(quiet)} or said {q.stderr!r}")

    # 3. a refused setting, in one line
    policy = os.path.join(d, "policy.toml")
    with open(policy, "w") as f:
        f.write('[policy]\nlocked = true\n[memory]\ncap = "8GiB"\n')
    refused_out = os.path.join(d, "refused")
    env = dict(base_env, CUDASHIM_POLICY=policy, CUDASHIM_MEM_CAP="16GiB")
    p = subprocess.run([cli, "run", "--out", refused_out, "--", py, job, fake, soname], env=env, capture_output=True,
                       text=True, timeout=120)
    lines = screen_check.summary_of(p.stderr)
    refused = [l.strip() for l in lines if l.strip().startswith("refused ")]
    want = (r"refused MEM_CAP='16GiB' from CUDASHIM_MEM_CAP: '\d+' is not tighter than '8589934592' \(the policy "
            r"locked by " + re.escape(policy) + r":2:\d+\); kept '8589934592'$")
    if len(refused) != 1 or not re.match(want, refused[0]):
        errors.append(f"expected one refused line matching {want!r}, got {refused!r}")
    print("--- the refused setting's line:", refused)

    # 4. the no-CUDA files are read as hostile: a line not as the shim writes it is named and
    # skipped, a last line cut short is not counted, a FIFO of that name is refused at once
    hostile = os.path.join(d, "hostile")
    os.makedirs(hostile)
    with open(os.path.join(hostile, "cudashim-h1.no-cuda"), "w") as f:
        f.write("12\tbash\nnot a line\n13\tsh\n14\tbash")
    os.mkfifo(os.path.join(hostile, "cudashim-h2.no-cuda"))
    r = subprocess.run([cli, "report", hostile], env=base_env, capture_output=True, text=True, timeout=30)
    if "2 processes made no CUDA call: bash (1), sh (1)\n" not in r.stdout or "line 2 is not" not in r.stderr \
            or "cudashim-h2.no-cuda" not in r.stderr:
        errors.append(f"hostile no-CUDA files: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
    print("--- hostile no-CUDA files:", r.stdout.strip().splitlines()[:1], r.stderr.strip().splitlines())

for e in errors:
    print("FAIL: " + e)
print("ok: the summary fits one screen, with each part" if not errors else "")
sys.exit(1 if errors else 0)
