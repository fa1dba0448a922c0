#!/usr/bin/env python3
"""summary_golden.py CLI FIXTURE_DIR GOLDEN: the text summary of `cudashim report` on saved
runs (issue 21), compared line by line with GOLDEN.

FIXTURE_DIR holds (as saved-<name>, the names .gitignore would skip) the report of gpu/realworld/idle_loops.py input-bound on the H200 (2026-12-01, NVML sampling: the GPU-time lines and gpu.idle; paths moved under /nonexistent), the report of gpu/realworld/dataloader_workers.py --planted on the H200 (2026-12-02, build eee7fff: two call sites of copy.async-from-pageable on one line, x.to() and y.to(), which the summary prints as one line; cuDNN's PTX JIT as an info; paths moved under /nonexistent), what the shim wrote for tests/progs/cap_paths under CUDASHIM_MEM_CAP=10MiB
(denials on every path: out-of-memory context, top sites, leaks by site, the policy from
CUDASHIM_MEM_CAP), for sync_rules churn_after_oom with CUDASHIM_POOL=1 (the pool, a
driver out-of-memory), both from the base build of 2026-12-01 with their paths moved under
/nonexistent (so no frame resolves against a file of this machine), and a flight record
of a SIGSEGV with its backtrace next to the event stream that process left (no exit line).

The summary must show, per process: the command, host, cudashim and the CUDA runtime; every
site of every warning (the info findings in one line); the out-of-memory events with the first
one's context and top sites; the allocations live at exit (by site with --verbose); the
libraries in one line when they agree (each with who loaded it and why that file with
--verbose); the policy and where it came from (a policy of defaults with --verbose); the pool. The crash is told once: the record with its
backtrace, and its stream as "crashed (SIGSEGV ...)", never as killed (SIGKILL).
Set CUDASHIM_UPDATE_GOLDEN=1 to rewrite GOLDEN from this build.
"""
import difflib
import os
import shutil
import subprocess
import sys
import tempfile

cli, fixture, golden = sys.argv[1:4]
with tempfile.TemporaryDirectory() as out:
    runs = os.path.join(out, "runs")
    os.mkdir(runs, 0o700)
    for f in os.listdir(fixture):  # saved-cudashim-*: the names the shim gives, kept out of .gitignore's way
        if f.startswith("saved-"):
            shutil.copy(os.path.join(fixture, f), os.path.join(runs, f[len("saved-"):]))
            os.chmod(os.path.join(runs, f[len("saved-"):]), 0o600)
    p = subprocess.run([cli, "report", runs], capture_output=True, text=True, env=dict(os.environ, NO_COLOR="1"),
                       timeout=60)
    got = p.stdout.replace(runs, "<RUNS>")
    # --verbose: every library, and the settings the environment gave (issue 33, item 5).
    verbose = subprocess.run([cli, "report", "--verbose", runs], capture_output=True, text=True,
                             env=dict(os.environ, NO_COLOR="1"), timeout=60).stdout
    # The page shows the same GPU-time numbers (the gpu_time section, docs/gpu-time.md).
    page = os.path.join(out, "page.html")
    h = subprocess.run([cli, "report", "--html", page, runs], capture_output=True, text=True, timeout=60)
    html = open(page).read() if h.returncode == 0 and os.path.exists(page) else ""
if p.returncode != 0 or p.stderr:
    print(f"FAIL: cudashim report exited {p.returncode}: {p.stderr[-500:]}")
    sys.exit(1)
if os.environ.get("CUDASHIM_UPDATE_GOLDEN") == "1":
    open(golden, "w").write(got)
    print(f"updated {golden}")
    sys.exit(0)
want = open(golden).read()
errors = []
if got != want:
    errors.append("the summary differs from the golden file:\n" +
                  "".join(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "golden", "now")))
# What the golden file must hold whatever it is regenerated from (issue 21).
for needed in ("command: /nonexistent/build/bin/cap_paths", "out of memory:", "the first: cuMemAlloc_v2 of 4.0 MiB",
               "at cap_paths+0x1524", "live at exit: 72.0 MiB in 3 allocations",
               "libraries: 2 CUDA libraries, one runtime 13.0, consistent (the list: --verbose, or the report)",
               "policy: memory cap 10485760", "pool: on", "backtrace of the faulting thread",
               "the process crashed (SIGSEGV", "GPU 0: idle 94% of the steady state (30 NVML samples",
               "warning: [gpu.idle] device 0:", "(host-bound)"):
    if needed not in got:
        errors.append(f"the summary lacks '{needed}'")
# One screen: the environment's settings and the list of agreeing libraries only with --verbose.
if "MEM_CAP from CUDASHIM_MEM_CAP" in got or "in LD_LIBRARY_PATH" in got:
    errors.append("without --verbose the summary names settings from the environment or lists agreeing libraries")
for needed in ("  libraries:\n", "in LD_LIBRARY_PATH", "MEM_CAP from CUDASHIM_MEM_CAP"):
    if needed not in verbose:
        errors.append(f"the --verbose summary lacks {needed!r}")
# One screen (issue 33.5): the info findings in one line, the sites of what is live at exit, the
# top 3 blocked APIs and a policy of defaults only with --verbose.
if "module.ptx-jit             info:" in got or "3 info findings (module.ptx-jit, fatbin.mostly-other-archs, " \
        "triton.toolchain: --verbose lists them)" not in got:
    errors.append("without --verbose the info findings are not one line")
if "live at exit: 514.3 MiB in 43 allocations (by site: --verbose, or the report)" not in got or \
        "the oldest 2.13 s old" in got:
    errors.append("without --verbose the sites of what is live at exit are listed, or the line does not say where they are")
if "module.ptx-jit             info:" not in verbose or "the oldest 2.13 s old" not in verbose or \
        "cuMemFree_v2 (10 calls)" not in verbose or "policy: memory cap none" not in verbose:
    errors.append("the --verbose summary lacks the info findings, the sites live at exit, the 4th blocked API or the policy")
if "CUDA runtime 13.0 (and 4 static copies of it, in libcublas.so.13, libcublasLt.so.13, ...)" not in got or \
        "13.0 (static, in libcudnn_graph.so.9)" not in verbose:
    errors.append("the headline's runtimes of one version are not one phrase, or --verbose does not name each copy")
if "policy: memory cap none" in got or "cuMemFree_v2 (10 calls)" in got:
    errors.append("without --verbose the summary has a policy of defaults or more than 3 blocked APIs")
if 'id="gpu-time-table"' not in html or 'data-pid="602" data-device="0" data-idle="0.936"' not in html or \
        "host-bound" not in html or 'id="gpu-time-none"' in html:
    errors.append(f"the page has no GPU-time row for pid 602 (report --html exit {h.returncode}: {h.stderr[-300:]})")
if "SIGKILL" in got:
    errors.append("a crashed process is also told as killed (SIGKILL)")
for e in errors:
    print("FAIL: " + e)
print("ok: the summary matches its golden file" if not errors else "")
sys.exit(1 if errors else 0)
