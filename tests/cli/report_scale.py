#!/usr/bin/env python3
"""report_scale.py CLI [--sizes N,N,...] [--keep FOLDER]: `cudashim report` grows linearly
with the size of a report, in every output mode.

Issue 37.6: a report whose `api` section held 5k entries took 0.35 s, 10k 1.2 s, 20k 9.3 s,
and 200k (a 20 MB report, under the reader's 32 MiB limit) was killed after 60 s in text,
--json and --html alike. The cause was the parse: nlohmann's parser with a callback (our
depth guard) scans the whole parent container each time one of its objects ends, so an
object of n objects cost n^2/2 member visits; the same held for an array of objects.

Generated here: reports holding N api entries (N = 20,000 and 200,000 by default), and one
holding 200,000 `libraries` entries (an array of objects, the other shape the scan hit).
Each is read in text, --json and --html; each run must exit 0 within RUN_TIMEOUT seconds
(the quadratic reader had not finished 200k entries after 15 minutes here), name every
entry ("across 200000 APIs", every library line), and --json must hold every entry. Then the ratio of
the largest size's text run to the smallest's must stay far from the quadratic one: 10x the
entries may cost at most 30x the time (linear: about 10x; quadratic: 100x). Each size's time
is the best of two runs, so one scheduling hiccup on a loaded machine does not fail it.
--keep FOLDER leaves the reports there (to time another build's CLI on them).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

cli = sys.argv[1]
sizes = [20000, 200000]
if "--sizes" in sys.argv:
    sizes = [int(n) for n in sys.argv[sys.argv.index("--sizes") + 1].split(",")]
keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
RUN_TIMEOUT = 60  # seconds per run; the linear reader takes about 1 s for 200k entries (about 10 s under ASan)
MAX_RATIO = 30
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
env["NO_COLOR"] = "1"
errors = []


def report(api_entries=3, libraries=1):
    """A report as the shim writes it, with `api_entries` rows in api and `libraries` libraries."""
    api = {}
    for i in range(api_entries):
        row = {"family": "sync", "layer": "driver", "calls": i + 1, "errors": 0}
        if i % 7 == 0:
            row["blocked_ns"] = 1000 * (i + 1)
        api[f"cuScaleTest{i:07d}"] = row
    libs = [{"family": "cudart", "file": f"/opt/job/lib{i:07d}/libcudart.so.12", "how": "DT_NEEDED"}
            for i in range(libraries)]
    return {
        "schema": "cudashim.report/1", "cudashim_version": "0.1.0",
        "process": {"pid": 4100, "ppid": 1, "rank": None, "host": "node7", "exe": "/opt/job/train", "argv": ["train"]},
        "api": api,
        "driver": {"libcuda_dlopen_requests": 1, "libcuda_loaded": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
        "blocking": {"blocked_ns": 25000000, "wall_ns": 1000000000, "clock": "tsc"},
        "memory": {"devices": [{"device": 0, "live_bytes": 1048576, "peak_bytes": 8388608, "kinds": {}}], "host": None},
        "findings": [], "library_findings": [], "libraries": libs,
    }


def run(args, label):
    """Runs the CLI; returns (seconds, stdout) or None after noting what went wrong."""
    start = time.monotonic()
    try:
        p = subprocess.run([cli, *args], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        errors.append(f"{label}: still running after {RUN_TIMEOUT} s (killed): the reader is not linear")
        return None
    took = time.monotonic() - start
    if p.returncode != 0:
        errors.append(f"{label}: exit {p.returncode}; stderr: {p.stderr[-500:]}")
        return None
    return took, p.stdout


def check_modes(path, label, entries, section):
    """Reads `path` in the three modes; returns the text run's time (None if it failed)."""
    times = {}
    # --verbose: every library listed (without it, libraries that agree are one line)
    got = run(["report", "--verbose", path] if section == "libraries" else ["report", path], f"{label} text")
    if got:
        times["text"] = got[0]
        want = f"across {entries} APIs" if section == "api" else f"lib{entries - 1:07d}/libcudart.so.12"
        if want not in got[1]:
            errors.append(f"{label} text: '{want}' not in the summary")
        if section == "libraries" and got[1].count("libcudart.so.12: DT_NEEDED") != entries:
            errors.append(f"{label} text: {got[1].count('libcudart.so.12: DT_NEEDED')} library lines, not {entries}")
    got = run(["report", "--json", path], f"{label} --json")
    if got:
        times["--json"] = got[0]
        try:
            n = len(json.loads(got[1])["processes"][0][section])
            if n != entries:
                errors.append(f"{label} --json: {n} {section} entries, not {entries}")
        except (ValueError, KeyError, IndexError) as e:
            errors.append(f"{label} --json: not the merged document ({e})")
    html = path + ".html"
    got = run(["report", "--html", html, path], f"{label} --html")
    if got:
        times["--html"] = got[0]
        if not os.path.exists(html) or os.path.getsize(html) < 1000:
            errors.append(f"{label} --html: no page written")
        else:
            os.unlink(html)
    print(f"{label}: {os.path.getsize(path) / 1e6:.1f} MB; " + ", ".join(f"{m} {t:.2f} s" for m, t in times.items()),
          flush=True)
    return times.get("text")


with tempfile.TemporaryDirectory() as tmp:
    folder = keep or tmp
    os.makedirs(folder, exist_ok=True)
    text_time = {}
    for n in sizes:
        path = os.path.join(folder, f"cudashim-node7-{n}.json")
        with open(path, "w") as f:
            json.dump(report(api_entries=n), f, indent=2)
        first = check_modes(path, f"{n} api entries", n, "api")
        again = run(["report", path], f"{n} api entries, text again")
        if first is not None and again is not None:
            text_time[n] = min(first, again[0])
    n = sizes[-1]
    path = os.path.join(folder, f"cudashim-node7-libraries-{n}.json")
    with open(path, "w") as f:
        json.dump(report(libraries=n), f, separators=(",", ":"))
    check_modes(path, f"{n} libraries", n, "libraries")

small, large = sizes[0], sizes[-1]
if small != large and small in text_time and large in text_time:
    ratio = text_time[large] / max(text_time[small], 1e-3)
    bound = MAX_RATIO * large / small / 10
    print(f"text, best of two: {small} entries {text_time[small]:.2f} s, {large} entries {text_time[large]:.2f} s: "
          f"{ratio:.1f}x for {large / small:.0f}x the entries (at most {bound:.0f}x)")
    if ratio > bound:
        errors.append(f"{large / small:.0f}x the api entries took {ratio:.1f}x the time (at most {bound:.0f}x): "
                      "the reader is not linear")
if errors:
    print("FAIL:\n  " + "\n  ".join(errors))
    sys.exit(1)
print(f"ok: {', '.join(str(n) for n in sizes)} api entries and {sizes[-1]} libraries read in every mode, linearly")
