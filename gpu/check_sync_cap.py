#!/usr/bin/env python3
"""check_sync_cap.py: run the sync-pattern scripts and the cap checks on the GPU host.

Writes results-sync.md and results-cap.md into --results. Every number in them is
read from this run: the shim's own reports, the scripts' JSON lines, and PyTorch's
sync debug mode warnings counted on stderr.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PATTERNS = [  # script, the finding it must produce ("none": no warning-level finding)
    ("item.py", "sync.scalar-readback"),
    ("cpu_small.py", "sync.scalar-readback"),
    ("nonzero.py", "sync.scalar-readback"),
    ("if_tensor.py", "sync.scalar-readback"),
    ("synchronize.py", "sync.explicit-in-loop"),
    ("event_sync.py", "sync.explicit-in-loop"),
    ("empty_cache.py", "alloc.churn-after-warmup"),
    ("pageable.py", "copy.async-from-pageable"),
    ("clean.py", "none"),
]


def run(cmd, env, timeout=120, cwd=None):
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
        return p.returncode, p.stdout, p.stderr, time.monotonic() - t
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or "", e.stderr or "", time.monotonic() - t


def reports_in(d):
    out = []
    for f in sorted(glob.glob(os.path.join(d, "cudashim-*.json"))):
        with open(f) as fh:
            out.append(json.load(fh))
    return out


def pattern_line(script):
    with open(os.path.join(HERE, "sync_patterns", script)) as f:
        for i, line in enumerate(f, 1):
            if "# the pattern" in line:
                return i
    return None


def sync_section(a, lines):
    lines.append("| pattern | expected finding | flagged by cudashim | Python line named | blocked (finding) | steps | "
                 "torch sync debug mode warnings | verdict |")
    lines.append("|---|---|---|---|---:|---:|---:|---|")
    ok_all = True
    for script, want in PATTERNS:
        d = os.path.join(a.work, "sync", script.replace(".py", ""))
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, LD_PRELOAD=a.shim, CUDASHIM_OUT=d, STEPS="60", PYTHONPATH=os.path.join(HERE, "sync_patterns"))
        rc, out, err, dt = run([sys.executable, os.path.join(HERE, "sync_patterns", script)], env)
        open(os.path.join(d, "stderr.txt"), "w").write(err)
        reps = reports_in(d)
        findings = [f for r in reps for f in r.get("findings", [])]
        warn = [f for f in findings if f["severity"] in ("warning", "error")]
        env2 = dict(os.environ, SYNC_DEBUG="1", STEPS="60", PYTHONPATH=os.path.join(HERE, "sync_patterns"))
        env2.pop("LD_PRELOAD", None)
        rc2, _, err2, _ = run([sys.executable, os.path.join(HERE, "sync_patterns", script)], env2)
        torch_warns = len(re.findall(r"called a synchronizing CUDA operation", err2))
        line = pattern_line(script)
        if want == "none":
            flagged = ", ".join(sorted({f["id"] for f in warn})) or "no warning-level finding"
            named = "-"
            blocked = "-"
            ok = rc == 0 and not warn
        else:
            hit = [f for f in findings if f["id"] == want]
            flagged = ("yes: " + want) if hit else ("NO (saw: " + (", ".join(sorted({f["id"] for f in findings})) or "nothing") + ")")
            where = hit[0]["sites"][0]["where"] if hit and hit[0]["sites"] else ""
            named_ok = f"{script}:{line}" in where
            named = (where if where else "-") + ("" if named_ok else " (not the pattern's line)")
            blocked = f"{hit[0]['blocked_ns'] / 1e6:.1f} ms ({hit[0]['count']} calls)" if hit else "-"
            ok = rc == 0 and bool(hit)
        ok_all &= ok
        lines.append(f"| {script} | {want} | {flagged} | {named} | {blocked} | 60 | {torch_warns} | "
                     f"{'PASS' if ok else 'FAIL'}{'' if rc == 0 else f' (exit {rc})'} |")
        print(f"[sync] {script}: rc={rc} {dt:.1f}s flagged={flagged} named={named} torch_warns={torch_warns}", flush=True)
        if rc != 0:
            print(err[-1500:])
    return ok_all


def cap_section(a, lines):
    ok_all = True
    lines.append("| case | expected | observed | verdict |")
    lines.append("|---|---|---|---|")
    gib = 1 << 30
    for conf in ("", "expandable_segments:True"):
        d = os.path.join(a.work, "cap", "torch-" + (conf.split(":")[0] or "default"))
        os.makedirs(d, exist_ok=True)
        env = dict(os.environ, LD_PRELOAD=a.shim, CUDASHIM_OUT=d, CUDASHIM_MEM_CAP="8GiB")
        if conf:
            env["PYTORCH_CUDA_ALLOC_CONF"] = conf
        else:
            env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
        rc, out, err, _ = run([sys.executable, os.path.join(HERE, "torch_cap.py")], env)
        open(os.path.join(d, "stderr.txt"), "w").write(err)
        try:
            j = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
        except Exception:
            j = {}
        reps = reports_in(d)
        denied = sum(r.get("oom", {}).get("denied_by_policy", 0) for r in reps)
        alloc = j.get("allocated", 0) / gib
        ok = (rc == 0 and j.get("oom") and 7 <= alloc <= 8 and j.get("mem_get_info_total") == 8 * gib and denied > 0)
        ok_all &= bool(ok)
        lines.append(f"| torch, 1 GiB tensors, cap 8 GiB, PYTORCH_CUDA_ALLOC_CONF='{conf}' | torch.OutOfMemoryError with 7-8 GiB "
                     f"live; mem_get_info total = 8 GiB | OOM raised: {j.get('oom')}, {j.get('tensors')} tensors, "
                     f"{alloc:.2f} GiB allocated, {j.get('reserved', 0) / gib:.2f} GiB reserved; mem_get_info total "
                     f"{j.get('mem_get_info_total', 0) / gib:.2f} GiB free {j.get('mem_get_info_free', 0) / gib:.2f} GiB; "
                     f"policy denials in the report: {denied}; exit {rc} | {'PASS' if ok else 'FAIL'} |")
        print(f"[cap] torch conf='{conf}': {j} rc={rc}", flush=True)
        if rc != 0:
            print(err[-1500:])
    d = os.path.join(a.work, "cap", "async")
    os.makedirs(d, exist_ok=True)
    prog = os.path.join(a.bin, "async_cap")
    env = dict(os.environ, LD_PRELOAD=a.shim, CUDASHIM_OUT=d, CUDASHIM_MEM_CAP="8GiB")
    rc, out, err, _ = run([prog], env, timeout=60)
    try:
        j = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])
    except Exception:
        j = {}
    ok = rc == 0 and j.get("blocks") == 8 and j.get("error_name") == "cudaErrorMemoryAllocation"
    ok_all &= ok
    lines.append(f"| cudaMallocAsync of 1 GiB blocks, cap 8 GiB | 8 blocks, then cudaErrorMemoryAllocation | {j.get('blocks')} "
                 f"blocks, then {j.get('error_name')}; exit {rc} | {'PASS' if ok else 'FAIL'} |")
    print(f"[cap] async: {j} rc={rc}", flush=True)
    return ok_all


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shim", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    import torch  # noqa: F401  (versions for the header)
    head = [f"- date: {time.strftime('%Y-%m-%d %H:%MZ', time.gmtime())}",
            f"- torch {torch.__version__} (CUDA {torch.version.cuda}), GPU {torch.cuda.get_device_name(0)}",
            f"- driver {subprocess.run(['nvidia-smi', '--query-gpu=driver_version', '--format=csv,noheader'], capture_output=True, text=True).stdout.strip()}",
            f"- shim: {a.shim}", "- command: `bash gpu/run_sync_cap.sh` (in the same device call as gpu/run_gpu.sh)", ""]
    sync_lines = ["# Synchronization findings on the GPU host", ""] + head
    ok1 = sync_section(a, sync_lines)
    sync_lines += ["", "\"torch sync debug mode warnings\": the same script run without cudashim under "
                   "torch.cuda.set_sync_debug_mode(\"warn\"); its count of \"called a synchronizing CUDA operation\" warnings."]
    cap_lines = ["# Allocator policy on the GPU host", ""] + head
    ok2 = cap_section(a, cap_lines)
    for name, lines in (("results-sync.md", sync_lines), ("results-cap.md", cap_lines)):
        with open(os.path.join(a.results, name), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
    return 0 if ok1 and ok2 else 1


if __name__ == "__main__":
    sys.exit(main())
