#!/usr/bin/env python3
"""job_limits.py SHIM FAKECUDA_DIR JOB_LIMITS CASE: legal things a job does must work as without
the shim, and the shim's outputs survive them (issue 37). CASE, each a CTest entry:

- stacks: threads with 16, 32 and 64 KiB stacks start, before and after a CUDA call, as they do
  without the shim (its 96 KiB of static TLS made pthread_create fail with EINVAL; Node.js
  printed "pthread_create: Invalid argument");
- fsize: 3,000 calls under a file-size limit of 64 KiB (`ulimit -f 64`), 8 KiB and 600 bytes,
  SIGXFSZ at its default action: the job ends 0 as without the shim (it died of SIGXFSZ, 153 in
  a shell), no file passes the limit, no temporary file is left, the report is written when it
  fits (64 KiB), and every output that could not be written is named on one line (at 600 bytes
  the event stream stops at its last whole line, with its own line); a stderr redirected to a
  file under the 600-byte limit gets the lines that fit and the job still ends 0;
- fork_exit: a parent that called CUDA forks 10 children that call CUDA and end with _exit: 11
  reports, each child's with its own calls (1 of 11 before); the same with a Python parent and
  three os._exit children (1 of 4 before);
- stderr: a job closes every descriptor and opens its data files on 0, 1, 2; the shim's log
  lines (debug level: one at exit at least) never land in the data file named 2 (446 bytes of
  warnings and summary did); a control run shows the lines are there when stderr stays;
- report_paths: cudashim_write_report to its own path, then to 100 other paths: the exit
  report still replaces the early one and counts every call (it failed with "File exists"
  after 64 and the stale report stayed).
"""
import glob
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

shim, fake, prog, case = sys.argv[1:5]
errors = []


def run(argv, out, with_shim=True, preexec=None, level="warn", **kw):
    """Runs argv with the test double (and the shim); output captured unless kw says where."""
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL=level)
    env.pop("LD_PRELOAD", None)
    if with_shim:
        env["LD_PRELOAD"] = shim
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.PIPE)
    return subprocess.run(argv, env=env, text=True, timeout=60, preexec_fn=preexec, **kw)


def reports(out):
    got = {}
    for f in glob.glob(os.path.join(out, "cudashim-*.json")):
        if not f.endswith("-crash.json"):
            r = json.load(open(f))
            got[r["process"]["pid"]] = r
    return got


def calls(report, api):
    return report["api"].get(api, {}).get("calls", 0)


def file_limit(limit):
    def set_limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; a job's C code gets the default
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return set_limit


if case == "stacks":
    with tempfile.TemporaryDirectory() as o0, tempfile.TemporaryDirectory() as out:
        plain, p = run([prog, "stacks"], o0, with_shim=False), run([prog, "stacks"], out)
        print("without the shim:\n" + plain.stdout + "with the shim:\n" + p.stdout)
        if plain.returncode != 0:
            errors.append(f"the program's own small-stack threads fail without the shim: {plain.stdout}")
        if p.returncode != 0 or p.stdout != plain.stdout:
            errors.append(f"with the shim: exit {p.returncode}, {p.stdout!r} (without: {plain.stdout!r}) {p.stderr[-400:]}")
        if len(reports(out)) != 1:
            errors.append(f"reports {os.listdir(out)}, expected one")

elif case == "fsize":
    for limit, report_fits, stream_cut in ((64 << 10, True, False), (8 << 10, False, False), (600, False, True)):
        with tempfile.TemporaryDirectory() as o0, tempfile.TemporaryDirectory() as out:
            plain = run([prog, "calls", "3000"], o0, with_shim=False, preexec=file_limit(limit))
            p = run([prog, "calls", "3000"], out, preexec=file_limit(limit))
            files = sorted(os.listdir(out))
            sizes = {f: os.path.getsize(os.path.join(out, f)) for f in files}
            tmp = [f for f in files if ".tmp." in f]
            reps = reports(out)
            named = [l for l in p.stderr.splitlines() if "file-size limit" in l]
            print(f"limit {limit} bytes: exit {p.returncode} (without the shim {plain.returncode}); files {sizes}; "
                  f"lines: {named}")
            if plain.returncode != 0 or p.returncode != 0:
                errors.append(f"limit {limit}: exit {p.returncode} with the shim (-25 is SIGXFSZ), "
                              f"{plain.returncode} without: {p.stderr[-600:]}")
            if tmp:
                errors.append(f"limit {limit}: temporary files left: {tmp}")
            errors += [f"limit {limit}: {f} ({n} bytes) is over the limit" for f, n in sizes.items() if n > limit]
            if report_fits:
                if len(reps) != 1 or calls(next(iter(reps.values())), "cuLaunchKernel") != 750:
                    errors.append(f"limit {limit}: the report ({list(reps)}) does not count the 750 launches")
            elif reps:
                errors.append(f"limit {limit}: a report over the limit was written: {list(reps)}")
            written = {f.rsplit(".", 1)[-1] for f in files}
            for kind, word in (("json", "report"), ("trace", "trace")):
                if kind not in written and not any(f"could not write the {word}" in l for l in named):
                    errors.append(f"limit {limit}: no {word} and no line naming the limit for it: {p.stderr[-600:]}")
            streams = [f for f in files if f.endswith(".ndjson")]
            lines = open(os.path.join(out, streams[0])).read().splitlines() if streams else []
            try:
                types = [json.loads(l)["type"] for l in lines]
            except ValueError as e:
                types = [f"not NDJSON: {e}"]
            stopped = [l for l in named if "event stream" in l]
            if stream_cut != bool(stopped) or (stream_cut and (not types or "exit" in types)):
                errors.append(f"limit {limit}: stream lines {types}, lines about it {stopped} (cut expected: {stream_cut})")
            if not stream_cut and types[-1:] != ["exit"]:
                errors.append(f"limit {limit}: the stream ends {types[-1:]}, not with its exit line")
            if any(l.count("cudashim[") != 1 for l in named) or len(stopped) > 1:
                errors.append(f"limit {limit}: lines {named}")

    # stderr redirected to a file under the same 600-byte limit: lines that do not fit are dropped.
    with tempfile.TemporaryDirectory() as out:
        err_path = os.path.join(out, "stderr.txt")
        with open(err_path, "w") as err:
            p = run([prog, "calls", "3000"], os.path.join(out, "o"), preexec=file_limit(600), stderr=err)
        size = os.path.getsize(err_path)
        print(f"stderr a file under a 600-byte limit: exit {p.returncode}, {size} bytes in it")
        if p.returncode != 0 or size > 600:
            errors.append(f"stderr to a file at a 600-byte limit: exit {p.returncode}, {size} bytes")

elif case == "fork_exit":
    with tempfile.TemporaryDirectory() as out:
        p = run([prog, "fork_exit", "10"], out)
        kids = [tuple(map(int, c.split(":"))) for c in p.stdout.strip().split(",")] if p.returncode == 0 else []
        reps = reports(out)
        got = sorted(calls(reps[pid], "cuLaunchKernel") for pid, _ in kids if pid in reps)
        print(f"C parent: exit {p.returncode}, children {kids}; {len(reps)} reports; child launches {got}")
        if [c for _, c in kids] != list(range(10)):
            errors.append(f"C parent: children ended {kids}, expected _exit(0..9): {p.stderr[-600:]}")
        if len(reps) != 11 or got != [10 + k for k in range(10)]:
            errors.append(f"C parent: {len(reps)} reports of 11, children's launches {got}")
    job = r"""
import ctypes, os, sys
cuda = ctypes.CDLL("libcuda.so.1")
assert cuda.cuInit(0) == 0
pids = []
for k in range(3):
    pid = os.fork()
    if pid == 0:
        for _ in range(3 + k):
            cuda.cuInit(0)
        os._exit(k)
    pids.append(pid)
print(",".join(f"{pid}:{os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])}" for pid in pids))
"""
    # Five runs: the children fork right after the parent's first CUDA call, while the shim's
    # own threads start (and, before the loader gate, died at their first dlopen in 11 of 12
    # runs: symbols/walk_objects.h).
    for attempt in range(5):
        with tempfile.TemporaryDirectory() as out:
            p = run([sys.executable, "-c", job], out)
            kids = [tuple(map(int, c.split(":"))) for c in p.stdout.strip().split(",")] if p.returncode == 0 else []
            reps = reports(out)
            got = sorted(calls(reps[pid], "cuInit") for pid, _ in kids if pid in reps)
            print(f"Python parent, run {attempt + 1}: exit {p.returncode}, children {kids}; {len(reps)} reports; "
                  f"child cuInit calls {got}")
            if len(reps) != 4 or got != [3, 4, 5] or [c for _, c in kids] != [0, 1, 2]:
                errors.append(f"Python parent, run {attempt + 1}: {len(reps)} reports of 4, children {kids}, "
                              f"cuInit calls {got}: {p.stderr[-600:]}")

elif case == "stderr":
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as work:
        p = run([prog, "close_stdio", work], out, level="debug")
        data = {i: open(os.path.join(work, f"data{i}"), "rb").read() for i in range(3)
                if os.path.exists(os.path.join(work, f"data{i}"))}
        print(f"exit {p.returncode}; data files: { {i: len(d) for i, d in data.items()} }")
        if p.returncode != 0:
            errors.append(f"exit {p.returncode}: {p.stderr[-600:]}")
        for i in range(3):
            want = f"job data {i}\n".encode()
            if data.get(i) != want:
                errors.append(f"data{i} (descriptor {i}) holds {data.get(i, b'')[:300]!r}, not only the job's {want!r}")
        if len(reports(out)) != 1:
            errors.append(f"reports {os.listdir(out)}, expected one")
    # Control: with stderr left alone, the same run writes the exit lines the data file must not get.
    with tempfile.TemporaryDirectory() as out:
        p = run([prog, "calls", "400"], out, level="debug")
        if "report written to" not in p.stderr:
            errors.append(f"control: no 'report written to' line on a stderr left alone: {p.stderr[-400:]}")

elif case == "report_paths":
    with tempfile.TemporaryDirectory() as out, tempfile.TemporaryDirectory() as work:
        p = run([prog, "report_paths", work], out)
        reps = reports(out)
        launches = [calls(r, "cuLaunchKernel") for r in reps.values()]
        explicit = len(glob.glob(os.path.join(work, "r*.json")))
        print(f"exit {p.returncode}; {explicit} explicit reports; the exit report counts {launches} launches; "
              f"{p.stdout.strip()}")
        if p.returncode != 0 or explicit != 100:
            errors.append(f"exit {p.returncode}, {explicit} of 100 explicit reports: {p.stdout} {p.stderr[-400:]}")
        if launches != [20]:
            errors.append(f"the exit report counts {launches} launches, expected 20 (a stale report of 10 stayed?): "
                          f"{p.stderr[-400:]}")
        if [l for l in p.stderr.splitlines() if "could not write the report" in l]:
            errors.append(f"the exit report was refused: {p.stderr[-400:]}")
else:
    errors.append(f"unknown case {case}")

for e in errors:
    print("FAIL: " + e)
if not errors:
    print(f"ok: {case}")
sys.exit(1 if errors else 0)
