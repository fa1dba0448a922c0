#!/usr/bin/env python3
"""selfcost.py: does the default mode cost anything on a host-bound loop? (issue 33, item 4)

A host-bound training loop (CPU batch preparation of a few ms per step, the GPU's work for the
step queued behind it and overlapping the next step's preparation) runs bare and under
`cudashim run` (the default mode: no setting changed) in alternating processes, bare first in
odd rounds and shim first in even ones (ABBA...), ROUNDS rounds. Each process prints its median
step time over STEPS steps after a warm-up; per round, the ratio shim/bare. The table gives each
side's median of the processes' medians and their min-max, the median of the rounds' ratios and
their min-max, and what the reports' self_cost says cudashim used (its threads' CPU time and its
hooks' estimate, as a share of the wall time): the tool's own account beside the measured one.

  selfcost.py run --cli CLI --out DIR [--rounds 8] [--steps 150] [--prep 60000] [--cpu FAKECUDA_DIR]
      GPU: the loop in torch (a pinned batch, a non_blocking copy, an MLP's forward, backward and
      step). --cpu: the same shape through the runtime test double by ctypes (launches and an
      async copy per step; the double runs nothing), for this machine. Writes DIR/selfcost.json
      (every process's figures) and DIR/selfcost.md (the table); prints the table.
  selfcost.py table DIR/selfcost.json   the table again, from the figures (tested on a fixture).
  selfcost.py child [--steps N] [--prep N] [--cpu CUDART]   one process's loop (what `run` starts).

--prep N: the values sorted a step (numpy: 60000 is about 3-4 ms on a server core; without numpy,
--cpu, N/8 in pure Python). Exit 0 unless a process fails. 8 rounds of 150 steps: about 8 s a
process on the H200 (torch's start-up, ~5 s, is most of it), so 120-140 s; about 45 s here with --cpu.
"""
import argparse
import glob
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_PCT = 0.5


def prep_batch(n, rng, np):
    """The step's CPU work: a fixed amount (not a fixed time: a slower host shows as a slower step)."""
    if np is not None:
        return np.sort(rng.standard_normal(n).astype(np.float32))
    xs = [rng.random() for _ in range(n // 8)]
    xs.sort()
    return xs


def child_torch(steps, warm, prep):
    import numpy as np
    import torch
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    pinned = [torch.empty(256 * 1024, dtype=torch.float32).pin_memory() for _ in range(2)]
    times, last = [], None
    for i in range(warm + steps):
        a = prep_batch(prep, rng, np)
        buf = pinned[i % 2]
        buf[: min(a.size, buf.numel())].copy_(torch.from_numpy(a[: buf.numel()]))
        x = buf.to(dev, non_blocking=True).view(256, 1024)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        now = time.perf_counter()
        if last is not None and i >= warm:
            times.append(now - last)
        last = now
    torch.cuda.synchronize()
    return times


def child_fake(cudart, steps, warm, prep):
    import ctypes

    class Dim3(ctypes.Structure):
        _fields_ = [("x", ctypes.c_uint), ("y", ctypes.c_uint), ("z", ctypes.c_uint)]

    rt = ctypes.CDLL(cudart)  # the GIL released in calls, as torch's ops do
    rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, Dim3, Dim3, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
    kernel = ctypes.cast(rt.cudaLaunchKernel, ctypes.c_void_p)
    dev = ctypes.c_void_p()
    assert rt.cudaMalloc(ctypes.byref(dev), ctypes.c_size_t(1 << 20)) == 0
    host = ctypes.create_string_buffer(1 << 20)
    rng = random.Random(0)
    times, last = [], None
    for i in range(warm + steps):
        prep_batch(prep, rng, None)
        rt.cudaMemcpyAsync(dev, host, ctypes.c_size_t(1 << 20), 1, None)
        for _ in range(12):  # forward, backward and the optimizer's kernels
            rt.cudaLaunchKernel(kernel, Dim3(1, 1, 1), Dim3(256, 1, 1), None, 0, None)
        now = time.perf_counter()
        if last is not None and i >= warm:
            times.append(now - last)
        last = now
    rt.cudaDeviceSynchronize()
    return times


def child(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--warm", type=int, default=20)
    ap.add_argument("--prep", type=int, default=60000)
    ap.add_argument("--cpu")
    a = ap.parse_args(argv)
    times = child_fake(a.cpu, a.steps, a.warm, a.prep) if a.cpu else child_torch(a.steps, a.warm, a.prep)
    print(json.dumps({"median_ms": statistics.median(times) * 1e3, "mean_ms": statistics.fmean(times) * 1e3,
                      "steps": len(times)}))


def one_process(cmd, env, out=None):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr[-1500:]}")
    r = json.loads(lines[-1])
    if out is not None:
        reps = [f for f in glob.glob(os.path.join(out, "**", "cudashim-*.json"), recursive=True)
                if not f.endswith("-crash.json")]
        costs = [json.load(open(f)).get("self_cost") for f in reps]
        costs = [c for c in costs if c]
        r["self_cost"] = max(costs, key=lambda c: c["wall_ns"]) if costs else None
    return r


def run(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", 8)))
    ap.add_argument("--steps", type=int, default=150)
    ap.add_argument("--prep", type=int, default=60000)
    ap.add_argument("--cpu", metavar="FAKECUDA_DIR")
    a = ap.parse_args(argv)
    os.makedirs(a.out, exist_ok=True)
    me = os.path.abspath(__file__)
    kid = [sys.executable, me, "child", "--steps", str(a.steps), "--prep", str(a.prep)]
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("CUDASHIM_")]:
        del env[k]  # the default mode: nothing set
    if a.cpu:
        cudart = sorted(glob.glob(os.path.join(a.cpu, "libcudart.so*")))[0]
        kid += ["--cpu", cudart]
        env["LD_LIBRARY_PATH"] = a.cpu
    rows = []
    t0 = time.time()
    for rnd in range(a.rounds):
        order = ("bare", "shim") if rnd % 2 == 0 else ("shim", "bare")
        row = {"round": rnd + 1, "order": "-".join(order)}
        for side in order:
            if side == "bare":
                row["bare"] = one_process(kid, env)
            else:
                with tempfile.TemporaryDirectory() as out:
                    row["shim"] = one_process([a.cli, "run", "--quiet", "--out", out] + kid, env, out)
        rows.append(row)
        print(f"round {rnd + 1}: bare {row['bare']['median_ms']:.3f} ms, shim {row['shim']['median_ms']:.3f} ms", flush=True)
    doc = {"command": " ".join([os.path.relpath(me)] + ["run"] + argv), "mode": "cpu (test double)" if a.cpu else "gpu (torch)",
           "steps": a.steps, "prep": a.prep, "seconds": round(time.time() - t0, 1), "rounds": rows}
    with open(os.path.join(a.out, "selfcost.json"), "w") as f:
        json.dump(doc, f, indent=1)
    text = table(doc)
    with open(os.path.join(a.out, "selfcost.md"), "w") as f:
        f.write(text)
    print(text)


def summarize(doc):
    """The table's figures: per side the median and min-max of the processes' medians, the rounds'
    ratios shim/bare (median, min-max), and the reports' self_cost share of wall (median, max)."""
    rows = doc["rounds"]
    bare = [r["bare"]["median_ms"] for r in rows]
    shim = [r["shim"]["median_ms"] for r in rows]
    ratios = [s / b for s, b in zip(shim, bare) if b > 0]
    own = [r["shim"]["self_cost"]["share_of_wall_pct"] for r in rows if r["shim"].get("self_cost")]
    return {"rounds": len(rows), "bare_median": statistics.median(bare), "bare_min": min(bare), "bare_max": max(bare),
            "shim_median": statistics.median(shim), "shim_min": min(shim), "shim_max": max(shim),
            "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "own_median_pct": statistics.median(own) if own else None, "own_max_pct": max(own) if own else None}


def table(doc):
    s = summarize(doc)
    own = (f"{s['own_median_pct']:.3f} % (max {s['own_max_pct']:.3f} %)" if s["own_median_pct"] is not None
           else "no self_cost in the reports")
    lines = [f"# cudashim's default mode on a host-bound loop: bare vs `cudashim run`, {doc['mode']}", "",
             f"- command: `{doc['command']}`",
             f"- {s['rounds']} rounds, alternating (bare first in odd rounds, shim first in even); {doc['steps']} steps a "
             f"process after 20 warm-up steps; batch preparation: {doc['prep']} values sorted a step; "
             f"{doc['seconds']} s in all",
             "", "| | median step ms (median of processes) | min-max |", "|---|---:|---:|",
             f"| bare | {s['bare_median']:.3f} | {s['bare_min']:.3f}-{s['bare_max']:.3f} |",
             f"| cudashim run | {s['shim_median']:.3f} | {s['shim_min']:.3f}-{s['shim_max']:.3f} |",
             f"| ratio shim/bare, per round | {s['ratio_median']:.4f} | {s['ratio_min']:.4f}-{s['ratio_max']:.4f} |",
             "", f"- cudashim's own account (the reports' self_cost.share_of_wall_pct): {own}",
             f"- goal: no cost above {GOAL_PCT} % of a step; measured median ratio "
             f"{(s['ratio_median'] - 1) * 100:+.2f} % (spread {(s['ratio_min'] - 1) * 100:+.2f} to "
             f"{(s['ratio_max'] - 1) * 100:+.2f} %)", "",
             "| round | order | bare ms | shim ms | shim/bare | self_cost % of wall |", "|---:|---|---:|---:|---:|---:|"]
    for r in doc["rounds"]:
        sc = r["shim"].get("self_cost")
        own_cell = f"{sc['share_of_wall_pct']:.3f}" if sc else "-"
        lines.append(f"| {r['round']} | {r['order']} | {r['bare']['median_ms']:.3f} | {r['shim']['median_ms']:.3f} | "
                     f"{r['shim']['median_ms'] / r['bare']['median_ms']:.4f} | {own_cell} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "table", "child"):
        print(__doc__, file=sys.stderr)
        return 2
    if sys.argv[1] == "child":
        child(sys.argv[2:])
    elif sys.argv[1] == "table":
        if len(sys.argv) != 3:
            print("usage: selfcost.py table SELFCOST_JSON", file=sys.stderr)
            return 2
        try:
            doc = json.load(open(sys.argv[2]))
        except (OSError, ValueError) as e:
            print(f"selfcost.py table: cannot read {sys.argv[2]}: {e}", file=sys.stderr)
            return 1
        print(table(doc), end="")
    else:
        run(sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
