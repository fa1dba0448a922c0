#!/usr/bin/env python3
"""compare_reports.py: the shim's reports of a fixed set of test programs, made comparable
across two builds (before / after a refactor).

  compare_reports.py capture BUILD_DIR OUT_DIR [--only NAME,...] [--keep-going]
  compare_reports.py diff DIR_A DIR_B [--strict] [--max-lines N]
  compare_reports.py list

capture runs each program of RUNS (below) from BUILD_DIR/bin under
LD_PRELOAD=BUILD_DIR/lib/libcudashim.so, with the test-double driver folder BUILD_DIR/fakecuda on
LD_LIBRARY_PATH and CUDASHIM_OUT=a fresh folder, the way tests/CMakeLists.txt and
tests/preload/*.py run them. Every report (cudashim-*.json) is loaded and normalized: values that
change from run to run (pids, hosts, times and durations, shares of wall time, addresses, thread
ids, temp folders, the build and source folders) are replaced by placeholders; structure, keys,
counts, ids and bytes stay. Lists of objects are put in a canonical order (by their id-like keys),
so that an order decided by elapsed time does not count as a change. It writes
OUT_DIR/<run>.json (sorted keys, indent 1) and keeps the raw files in OUT_DIR/raw/<run>/
(reports, streams, the program's stdout and stderr).

diff compares two capture folders run by run: values that differ, keys (or list entries) on one
side only, runs on one side only. It prints "run X: N fields moved" and one line per field
("path: a -> b"). Fields known to vary between two runs of one build (NOISY, below) are shown
apart and not counted unless --noisy-too. Exit 0 (it informs); --strict: exit 1 on any difference.

Python 3 standard library only.
"""
import argparse
import glob
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

MiB = 1 << 20
CUDART13 = "/usr/local/cuda/lib64/libcudart.so.13"

# ------------------------------------------------------------------ the runs
# argv and env values may name: {bin} BUILD/bin, {fake} BUILD/fakecuda, {deps} the source tree's
# .deps, {cudart13}, {cudart129}, {out} CUDASHIM_OUT, {lib129} the folder of the 12.9 runtime.
# hook_names: CUDASHIM_TEST_HOOK_NAMES for programs that print the double's counts (fake_truth.h);
#   it only feeds their stdout, never the report.
# needs: files that must exist, else the run is skipped (recorded as such).
# volatile: regexes over flattened paths (see flatten) whose values the run cannot repeat
#   (e.g. calls made by free-running threads); they are masked as "<varies>".
# fatbin: extract the .nv_fatbin section of BUILD/bin/sync_patterns into {out}/example.nv_fatbin.
SYNC_ENV = {"FAKECUDA_SYNC_DELAY_US": "300", "CUDASHIM_LOG_LEVEL": "warn"}
RUNS = [
    {"name": "driver_procaddr", "what": "driver API by cuGetProcAddress: api counts, memory ledger, a leak",
     "argv": ["{bin}/driver_paths", "procaddr", "200"]},
    {"name": "driver_dlsym", "what": "driver API by dlsym: dlsym substitution counters, same workload",
     "argv": ["{bin}/driver_paths", "dlsym", "200"]},
    {"name": "runtime_nested", "what": "the runtime (test double) over the driver: runtime layer, nesting",
     "argv": ["{bin}/runtime_paths", "50"], "hook_names": True},
    {"name": "sync_readback", "what": "sync.scalar-readback finding, blocked time, sites",
     "argv": ["{bin}/sync_rules", "readback"], "env": SYNC_ENV},
    {"name": "sync_churn", "what": "alloc.churn-after-warmup finding",
     "argv": ["{bin}/sync_rules", "churn"], "env": SYNC_ENV},
    {"name": "sync_pageable", "what": "copy.async-from-pageable finding (non-blocking)",
     "argv": ["{bin}/sync_rules", "pageable"], "env": SYNC_ENV},
    {"name": "sync_churn_oom_pool", "what": "an OOM, then churn with the pool: alloc.churn-pooled, oom counts",
     "argv": ["{bin}/sync_rules", "churn_after_oom"], "env": dict(SYNC_ENV, CUDASHIM_POOL="1")},
    {"name": "cap_paths", "what": "CUDASHIM_MEM_CAP=10MiB over every allocation path: denials, capped views",
     "argv": ["{bin}/cap_paths"], "env": {"CUDASHIM_MEM_CAP": "10MiB", "CUDASHIM_LOG_LEVEL": "error"}},
    {"name": "pool_guarantee", "what": "CUDASHIM_POOL=1: pool hits/fences, cached bytes, no leaks",
     "argv": ["{bin}/pool_guarantee", "guarantee"], "env": {"CUDASHIM_POOL": "1"},
     # whether a freed block's kernel is still running when the next allocation asks depends on timing
     "volatile": [r"^reports\.main\.pool\.devices\[.*\]\.(not_ready|fences|hits|misses)$"]},
    {"name": "pool_bound", "what": "CUDASHIM_POOL_MAX_CACHED=4MiB: the bound, releases",
     "argv": ["{bin}/pool_guarantee", "bound"], "env": {"CUDASHIM_POOL": "1", "CUDASHIM_POOL_MAX_CACHED": "4MiB"}},
    {"name": "oom_driver_pool", "what": "a real out-of-memory with the pool: oom_context, top sites",
     "argv": ["{bin}/pool_guarantee", "oom", "12", "8"],
     "env": {"FAKECUDA_TOTAL_MEM": str(16 * MiB), "CUDASHIM_POOL": "1"}},
    {"name": "real_cudart129", "what": "NVIDIA's libcudart 12.9 over the double: procaddr substitution, inventory",
     "argv": ["{bin}/real_cudart", "{cudart129}"], "hook_names": True, "needs": ["{cudart129}"]},
    {"name": "fork_threads", "what": "forks while 8 threads are in hooks: one report per child, their own counts",
     "argv": ["{bin}/fork_threads", "3"],
     # the parent's busy threads run until the last child ends: their counts (and what follows) vary
     "volatile": [r"^reports\.main\.api\..*\.(calls|errors)$",
                  r"^reports\.main\.memory\..*\.(allocs|frees|peak_bytes|live_bytes|live_allocations)$",
                  r"^reports\.main\.(blocking|leaks)\..*(count|calls)$",
                  r"^reports\.main\.findings\[.*\]\.(count|sites\[.*\]\.count)$",
                  # a child forked while the busy threads were in hooks: how many the shim had seen
                  r"^reports\.children\[\d+\]\.process\.threads$"]},
    {"name": "dlopen_shortfall", "what": "nvJitLink 12.1 then cuSPARSE 12.2 (lazy): library.versioned-symbol-shortfall",
     "argv": ["{bin}/dlopen_sequence", "now:{deps}/realbin/nvjitlink121/nvidia/nvjitlink/lib/libnvJitLink.so.12",
              "lazy:{deps}/realbin/cusparse122/nvidia/cusparse/lib/libcusparse.so.12"],
     "needs": ["{deps}/realbin/nvjitlink121/nvidia/nvjitlink/lib/libnvJitLink.so.12",
               "{deps}/realbin/cusparse122/nvidia/cusparse/lib/libcusparse.so.12"]},
    {"name": "live_inventory", "what": "driver 12.8, runtimes 13.0 and 12.9, PTX and a fatbin: library findings, modules",
     "argv": ["{bin}/live_inventory", "{cudart13}", "libcudart.so.12", "{out}/example.nv_fatbin"],
     "env": {"LD_LIBRARY_PATH": "{lib129}:{fake}", "FAKECUDA_DRIVER_VERSION": "12080", "CUDA_CACHE_DISABLE": "1",
             "CUDASHIM_TEST_HOOK_NAMES": "/dev/null"},
     "fatbin": True, "needs": ["{cudart13}", "{cudart129}", "{bin}/sync_patterns"]},
]

# ------------------------------------------------------------------ normalization
# Keys whose values are volatile wherever they appear.
VOLATILE_KEYS = {
    "pid", "ppid", "tid", "tids", "thread", "thread_id", "host", "hostname", "time", "seconds", "uptime",
    "address", "addr", "ptr", "pointer", "mtime", "inode", "build_id", "start", "end",
}
VOLATILE_SUFFIXES = ("_ns", "_ticks", "_us", "_ms", "_sec", "_seconds", "_time", "_unix", "_addr", "_address",
                     "_ptr", "_tid", "_pid")
VOLATILE_SUBSTRINGS = ("share", "per_sec", "_rate", "timestamp")
# Inside a stack frame (frames[], where_frame), what identifies the file build by build: the
# link-time address and the file's size move whenever the shim or the program is rebuilt.
FRAME_KEYS = {"size", "offset"}
HEX_RE = re.compile(r"0x[0-9a-fA-F]+")
TMP_RE = re.compile(r"/tmp/[A-Za-z0-9_.+-]+")
PROC_RE = re.compile(r"/proc/\d+")
NUM_TAIL_RE = re.compile(r"(cudashim-[^/\s\"']*?)-\d+(-r\d+)?\.(json|ndjson|trace)")
# Lists whose order is the data (stacks): never re-sorted.
ORDERED_KEYS = {"frames", "native", "evidence", "argv", "python"}
ID_KEYS = ("id", "abi", "name", "event", "type", "kind", "device", "file", "path", "module", "requested",
           "where", "api", "category", "severity")


def is_volatile_key(k):
    kl = k.lower()
    return kl in VOLATILE_KEYS or kl.endswith(VOLATILE_SUFFIXES) or any(s in kl for s in VOLATILE_SUBSTRINGS)


class Norm:
    def __init__(self, subs, pids):
        # longest first: the build folder before the source folder that holds it
        self.subs = sorted(((a, b) for a, b in subs if a), key=lambda ab: -len(ab[0]))
        self.pids = sorted({str(p) for p in pids if p}, key=len, reverse=True)

    def text(self, s):
        for a, b in self.subs:
            s = s.replace(a, b)
        s = NUM_TAIL_RE.sub(r"\1-<pid>\2.\3", s)
        s = PROC_RE.sub("/proc/<pid>", s)
        s = TMP_RE.sub("<TMP>", s)
        s = HEX_RE.sub("0x<hex>", s)
        for p in self.pids:
            s = re.sub(r"(?<![0-9])" + p + r"(?![0-9])", "<pid>", s)
        return s

    def value(self, v, key=None, in_frame=False):
        if isinstance(v, dict):
            frame = in_frame or key in ("frames", "where_frame", "frame")
            out = {}
            for k, x in v.items():
                if (is_volatile_key(k) or (frame and k in FRAME_KEYS)) and not isinstance(x, (dict, list)):
                    out[k] = None if x is None else f"<{type(x).__name__}>"
                elif is_volatile_key(k) and isinstance(x, list) and all(not isinstance(e, (dict, list)) for e in x):
                    out[k] = f"<list of {len(x)}>"
                else:
                    out[k] = self.value(x, k, frame)
            return out
        if isinstance(v, list):
            items = [self.value(x, key, in_frame) for x in v]
            if items and key not in ORDERED_KEYS and all(isinstance(x, dict) for x in items):
                items.sort(key=lambda x: (label_of(x) or "", json.dumps(x, sort_keys=True)))
            return items
        if isinstance(v, str):
            return self.text(v)
        if isinstance(v, float):
            return round(v, 6)
        return v


def label_of(d):
    """An id for a list entry from its id-like scalar keys (None when it has none)."""
    parts = []
    for k in ID_KEYS:
        if k in d and isinstance(d[k], (str, int)) and not isinstance(d[k], bool):
            parts.append(f"{k}={d[k]}")
            if len(parts) == 2:
                break
    return ",".join(parts) if parts else None


def flatten(v, path="", out=None):
    """path -> scalar; a list of objects is keyed by their labels when those are unique."""
    if out is None:
        out = {}
    if isinstance(v, dict):
        if not v:
            out[path] = {}
        for k in sorted(v):
            flatten(v[k], f"{path}.{k}" if path else k, out)
    elif isinstance(v, list):
        if not v:
            out[path] = []
        labels = [label_of(x) if isinstance(x, dict) else None for x in v]
        unique = all(labels) and len(set(labels)) == len(labels)
        for i, x in enumerate(v):
            flatten(x, f"{path}[{labels[i] if unique else i}]", out)
    else:
        out[path] = v
    return out


def unflatten_mask(doc, patterns):
    """Masks (as "<varies>") every scalar of doc whose flattened path matches one of patterns."""
    if not patterns:
        return doc
    regs = [re.compile(p) for p in patterns]

    def walk(v, path):
        if isinstance(v, dict):
            return {k: walk(x, f"{path}.{k}" if path else k) for k, x in v.items()}
        if isinstance(v, list):
            labels = [label_of(x) if isinstance(x, dict) else None for x in v]
            unique = all(labels) and len(set(labels)) == len(labels)
            return [walk(x, f"{path}[{labels[i] if unique else i}]") for i, x in enumerate(v)]
        return "<varies>" if any(r.search(path) for r in regs) and v is not None else v

    return walk(doc, "")


# ------------------------------------------------------------------ capture
def source_dir_of(build):
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache):
        for line in open(cache, errors="replace"):
            if line.startswith("CMAKE_HOME_DIRECTORY:") or line.startswith("cudashim_SOURCE_DIR:"):
                return line.split("=", 1)[1].strip()
    return os.path.dirname(os.path.abspath(build))


def capture(build, out_dir, only=None, keep_going=False):
    build = os.path.abspath(build)
    src = source_dir_of(build)
    deps = os.path.join(src, ".deps")
    shim = os.path.join(build, "lib", "libcudashim.so")
    fake = os.path.join(build, "fakecuda")
    cudart129 = os.path.join(deps, "cu129", "nvidia", "cuda_runtime", "lib", "libcudart.so.12")
    if not os.path.exists(shim) or not os.path.exists(os.path.join(fake, "libcuda.so.1")):
        sys.exit(f"capture: {shim} or {fake}/libcuda.so.1 missing (build cudashim_preload and fakecuda)")
    os.makedirs(out_dir, exist_ok=True)
    raw_root = os.path.join(out_dir, "raw")
    os.makedirs(raw_root, exist_ok=True)
    cli = os.path.join(build, "bin", "cudashim")
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("CUDASHIM_", "FAKECUDA_", "CUDA_", "LD_", "PYTORCH_"))}
    host = socket.gethostname()
    summary = []
    for run in RUNS:
        name = run["name"]
        if only and name not in only:
            continue
        tmp = tempfile.mkdtemp(prefix="cudashim-cmp-")
        try:
            fmt = {"bin": os.path.join(build, "bin"), "fake": fake, "deps": deps, "cudart13": CUDART13,
                   "cudart129": cudart129, "out": tmp, "lib129": os.path.dirname(os.path.realpath(cudart129))}
            sub = lambda s: s.format(**fmt)  # noqa: E731
            missing = [sub(p) for p in run.get("needs", []) + [run["argv"][0]] if not os.path.exists(sub(p))]
            result = {"_run": {"name": name, "what": run["what"]}}
            if missing:
                result["_run"]["skipped"] = "missing: " + ", ".join(missing)
            else:
                env = dict(base_env, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=tmp)
                env.update({k: sub(v) for k, v in run.get("env", {}).items()})
                work = tempfile.mkdtemp(prefix="cudashim-cmp-work-")
                if run.get("hook_names"):
                    names = os.path.join(work, "hook-names.txt")
                    text = ""
                    if os.path.exists(cli):
                        text = subprocess.run([cli, "hooks", "--names"], capture_output=True, text=True).stdout
                    with open(names, "w") as f:
                        f.write(text)
                    env["CUDASHIM_TEST_HOOK_NAMES"] = names
                if run.get("fatbin"):
                    subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin",
                                    os.path.join(build, "bin", "sync_patterns"), os.path.join(tmp, "example.nv_fatbin")],
                                   check=True)
                argv = [sub(a) for a in run["argv"]]
                p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     cwd=work)
                try:
                    stdout, stderr = p.communicate(timeout=300)
                except subprocess.TimeoutExpired:
                    p.kill()
                    stdout, stderr = p.communicate()
                shutil.rmtree(work, ignore_errors=True)
                raw = os.path.join(raw_root, name)
                shutil.rmtree(raw, ignore_errors=True)
                os.makedirs(raw)
                for f in sorted(os.listdir(tmp)):
                    if f.startswith("cudashim-"):
                        shutil.copy2(os.path.join(tmp, f), raw)
                with open(os.path.join(raw, "stdout.txt"), "w") as f:
                    f.write(stdout)
                with open(os.path.join(raw, "stderr.txt"), "w") as f:
                    f.write(stderr)
                reports = []
                for f in sorted(glob.glob(os.path.join(tmp, "cudashim-*.json"))):
                    with open(f) as fh:
                        reports.append(json.load(fh))
                pids = [p.pid] + [r.get("process", {}).get(k) for r in reports for k in ("pid", "ppid")]
                norm = Norm([(build, "<BUILD>"), (os.path.realpath(build), "<BUILD>"),
                             (tmp, "<OUT>"), (os.path.realpath(tmp), "<OUT>"),
                             (deps, "<DEPS>"), (os.path.realpath(deps), "<DEPS>"),
                             (src, "<SRC>"), (os.path.realpath(src), "<SRC>"),
                             ("/" + host + "-", "/<host>-"), ("-" + host + "-", "-<host>-")], pids)
                main = [r for r in reports if r.get("process", {}).get("pid") == p.pid]
                children = [norm.value(r) for r in reports if r.get("process", {}).get("pid") != p.pid]
                children.sort(key=lambda r: json.dumps(r, sort_keys=True))
                # the shim's own tagged log lines ([finding-id], ...) on stderr, counted
                tags = {}
                for t in re.findall(r"\[([a-z][a-z0-9_.-]*[a-z0-9])\]", stderr):
                    tags[t] = tags.get(t, 0) + 1
                result["_run"].update({
                    "argv": [norm.text(a) for a in argv],
                    "env": {k: norm.text(sub(v)) for k, v in sorted(run.get("env", {}).items())},
                    "exit": p.returncode,
                    "report_files": len(reports),
                    "streams": len(glob.glob(os.path.join(tmp, "cudashim-*.ndjson"))),
                    "traces": len(glob.glob(os.path.join(tmp, "cudashim-*.trace"))),
                    "stderr_tags": tags,
                })
                result["reports"] = {"main": norm.value(main[0]) if main else None, "children": children}
                result = unflatten_mask(result, run.get("volatile"))
                result["reports"]["children"].sort(key=lambda r: json.dumps(r, sort_keys=True))
                if p.returncode != 0 and not keep_going:
                    print(f"capture: {name}: exit {p.returncode}: {stderr[-400:]}", file=sys.stderr)
            with open(os.path.join(out_dir, name + ".json"), "w") as f:
                json.dump(result, f, sort_keys=True, indent=1)
                f.write("\n")
            r = result["_run"]
            line = (f"{name}: skipped ({r['skipped']})" if "skipped" in r else
                    f"{name}: exit {r['exit']}, {r['report_files']} report(s)")
            summary.append(line)
            print(line)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    with open(os.path.join(out_dir, "CAPTURE.txt"), "w") as f:
        f.write(f"build: {build}\nsource: {src}\n" + "\n".join(summary) + "\n")
    return 0


# ------------------------------------------------------------------ diff
# Fields known to differ between two runs of one build: diff lists them apart ("noisy") and does
# not count them. In 08a5419 the shim's own library rescans (policy::libraries_rescan on the
# cudashim-flush thread, whose ticks race with the program's end) dlopen/dlsym/dlclose through the
# interposed entry points, and shim/dl_hooks.cpp's dlopen_enter counts them before it looks at
# g_tls.internal: these counters carry 0 to 2 of the shim's own calls, by timing. Fixed since (the
# shim's own calls are not counted, preload.dl_counts): against a baseline from 08a5419 or earlier
# they are still noisy, and lower on the new side.
NOISY = [r"\.interposition\.(dlopen_calls|dlclose_calls|libcuda_dlopen_requests|dlsym_passthrough)$",
         r"\.driver\.libcuda_dlopen_requests$"]
NOISY_RE = [re.compile(p) for p in NOISY]


def is_noisy(path):
    return any(r.search(path) for r in NOISY_RE)


def short(v, n=70):
    s = json.dumps(v, sort_keys=True)
    return s if len(s) <= n else s[: n - 3] + "..."


def diff(a_dir, b_dir, strict=False, max_lines=40, noisy_too=False):
    names_a = {os.path.basename(f)[:-5] for f in glob.glob(os.path.join(a_dir, "*.json"))}
    names_b = {os.path.basename(f)[:-5] for f in glob.glob(os.path.join(b_dir, "*.json"))}
    total = noisy_total = 0
    for name in sorted(names_a | names_b):
        if name not in names_b or name not in names_a:
            print(f"run {name}: only in {'A' if name in names_a else 'B'}")
            total += 1
            continue
        with open(os.path.join(a_dir, name + ".json")) as f:
            fa = flatten(json.load(f))
        with open(os.path.join(b_dir, name + ".json")) as f:
            fb = flatten(json.load(f))
        moved_all = [(k, fa[k], fb[k]) for k in sorted(fa.keys() & fb.keys()) if fa[k] != fb[k]]
        noisy = [m for m in moved_all if is_noisy(m[0]) and not noisy_too]
        moved = [m for m in moved_all if m not in noisy]
        noisy_total += len(noisy)
        only_a = sorted(fa.keys() - fb.keys())
        only_b = sorted(fb.keys() - fa.keys())
        n = len(moved) + len(only_a) + len(only_b)
        total += n
        note = ""
        if noisy:
            note = f" ({len(noisy)} noisy, not counted: " + ", ".join(
                f"{k.rsplit('.', 1)[-1]} {x}->{y}" for k, x, y in noisy) + ")"
        if n == 0:
            print(f"run {name}: same{note}")
            continue
        print(f"run {name}: {len(moved)} fields moved, {len(only_a)} only in A, {len(only_b)} only in B{note}")
        lines = [f"  {k}: {short(x)} -> {short(y)}" for k, x, y in moved]
        lines += [f"  only in A: {k} = {short(fa[k])}" for k in only_a]
        lines += [f"  only in B: {k} = {short(fb[k])}" for k in only_b]
        for line in lines[:max_lines]:
            print(line)
        if len(lines) > max_lines:
            print(f"  (+{len(lines) - max_lines} more; --max-lines to see them)")
    print(f"total: {total} difference(s) over {len(names_a | names_b)} run(s)"
          + (f"; {noisy_total} noisy field(s) not counted (--noisy-too counts them)" if noisy_total else ""))
    return 1 if strict and total else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sp = ap.add_subparsers(dest="cmd", required=True)
    c = sp.add_parser("capture", help="run the programs of BUILD_DIR, write normalized reports to OUT_DIR")
    c.add_argument("build")
    c.add_argument("out")
    c.add_argument("--only", help="comma-separated run names")
    c.add_argument("--keep-going", action="store_true", help="say nothing of runs that exit nonzero")
    d = sp.add_parser("diff", help="compare two capture folders")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("--strict", action="store_true", help="exit 1 on any difference")
    d.add_argument("--max-lines", type=int, default=40, help="lines per run at the most (default 40)")
    d.add_argument("--noisy-too", action="store_true", help="count the known-noisy fields (NOISY) as differences")
    sp.add_parser("list", help="the runs capture makes")
    a = ap.parse_args()
    if a.cmd == "capture":
        return capture(a.build, a.out, set(a.only.split(",")) if a.only else None, a.keep_going)
    if a.cmd == "diff":
        return diff(a.a, a.b, a.strict, a.max_lines, a.noisy_too)
    for r in RUNS:
        print(f"{r['name']}: {r['what']}\n    {' '.join(r['argv'])}"
              + (f"\n    env {r['env']}" if r.get("env") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
