#!/usr/bin/env python3
"""screen.py CLI OUT: the summary a person reads, on a real torch job (issue 33 item 5).

Runs gpu/realworld/screen_job.py (ResNet-18, 100 steps, a DataLoader with 2 workers) under
`cudashim run` through `bash -c` (a shell that makes no CUDA call), prints the summary and its
line count, and checks each part (tests/cli/screen_check.py, the CPU test's own checker):
the headline (GPU, driver, runtime, framework), memory, the libraries in one line and the
processes that made no CUDA call in one line are required; GPU idle with its diagnosis and a
priced finding are shown when present (a clean 100-step job may have neither). Writes
OUT/summary.txt and OUT/stderr.txt. Exit 1 when the summary is longer than 25 lines, 2 when a
required part is missing, 3 when the job failed.
"""
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "tests", "cli"))
import screen_check  # noqa: E402

cli, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
job = os.path.join(here, "screen_job.py")
t0 = time.time()
p = subprocess.run([cli, "run", "--out", os.path.join(out, "run"), "--", "bash", "-c", f'python3 "{job}"; exit $?'],
                   capture_output=True, text=True, timeout=110)
lines = screen_check.summary_of(p.stderr)
with open(os.path.join(out, "stderr.txt"), "w") as f:
    f.write(p.stderr)
with open(os.path.join(out, "summary.txt"), "w") as f:
    f.write("\n".join(lines) + "\n")
print(p.stdout.strip())
print(f"--- the summary of `cudashim run -- bash -c 'python3 screen_job.py'` ({time.time() - t0:.0f} s):")
print("\n".join(lines))
print(f"--- {len(lines)} lines (limit {screen_check.MAX_LINES})")
required = [screen_check.HEADLINE, screen_check.GPUS, screen_check.MEMORY, screen_check.LIBRARIES, screen_check.NO_CUDA]
shown = [screen_check.GPU_IDLE, screen_check.FINDING]
found = screen_check.problems(lines, required)
for name, pattern in shown:
    print(f"{name}: {'present' if not screen_check.problems(lines, [(name, pattern)], 10**6) else 'absent (not required)'}")
for problem in found:
    print("FAIL: " + problem)
if p.returncode != 0:
    print(f"FAIL: the job exited {p.returncode}")
    sys.exit(3)
if len(lines) > screen_check.MAX_LINES:
    sys.exit(1)
sys.exit(2 if found else 0)
