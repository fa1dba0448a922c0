#!/usr/bin/env python3
"""selfcost.py: does the default mode cost anything on a host-bound loop? (issue 33, item 4)

A host-bound training loop (CPU batch preparation of a few ms a step, the GPU's work for the step
queued behind it and overlapping the next step's preparation) runs bare and under `cudashim run`
(the default mode: no setting changed). Start-up is paid once: PAIRS bare and PAIRS shim worker
processes start together and warm up (WARM seconds of steps, past the shim's start-up work),
then take turns: the parent asks one worker at a time for a block of BLOCK steps, pair by pair,
bare first or shim first by turns (ABBA), until SECONDS have passed. A block's time is the median
of its steps after the first DROP (the GPU's clocks come back from the other workers' turns);
its GPU work is finished before the next worker's turn. One unit is a pair's shim block against
its bare block of the same round: their ratio.

The answer: the median of the units' ratios, as "shim costs X %", with a 95 % interval from a
bootstrap that resamples pairs, then rounds within each pair (a worker's own luck, its core or
its memory, counts as noise: PAIRS of them), and beside it the sign test's interval over all
units (exact, but blind to a worker's own luck). Settled when the bootstrap interval lies on one
side of the goal (GOAL_PCT): "settled: shim costs X % +- Y % (95 %), below the 0.5 % goal", else
"not settled". The reports' self_cost (the tool's own account) is printed beside it.

  selfcost.py run --cli CLI --out DIR [--pairs 4] [--seconds 100] [--total S] [--block 150]
                  [--drop 20] [--warm 3] [--prep 60000] [--cpus none|auto|LIST] [--cpu FAKECUDA_DIR]
      GPU: the loop in torch (a pinned batch, a non_blocking copy, an MLP's forward, backward and
      step). --cpu: the same shape through the runtime test double by ctypes (launches and an
      async copy per step; the double runs nothing), for this machine. Writes DIR/selfcost.json
      (every block's step times) and DIR/selfcost.md (the table); prints the table. --total: no
      round starts past S seconds from the start, however slow the start-up was (a time limit).
      --cpus: every worker pinned to one set of CPUs (auto: 4 past the first two, when 8 or more
      are allowed), so that each block runs on the same cores whoever's turn it is.
  selfcost.py table DIR/selfcost.json   the table again, from the figures (tested on a fixture).
  selfcost.py child [--prep N] [--warm S] [--cpu CUDART]   one worker (what `run` starts): reads
      "run N" (prints the N steps' times, us, as one JSON line) or "quit" from stdin.

--prep N: the values sorted a step (numpy: 60000 is about 2 ms on a server core; without numpy,
--cpu, N/8 in pure Python). Exit 0 unless a worker fails; selfcost.json is rewritten after every
round, so a run cut short leaves the rounds it finished (`table` makes the table from them). On the H200: ~15 s of start-up (8 torch
processes at once, then WARM), SECONDS of blocks (~40 rounds of 4 pairs at 150 steps of ~2 ms),
a few seconds of exits and reports (all workers told to quit at once): about 115 s with SECONDS 90.
The shim workers' stderr (their live warnings) is kept in DIR/worker-shim-N.log.
"""
import argparse
import glob
import json
import math
import os
import random
import selectors
import statistics
import subprocess
import sys
import tempfile
import time

GOAL_PCT = 0.5
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 33


def prep_batch(n, rng, np):
    """The step's CPU work: a fixed amount (not a fixed time: a slower host shows as a slower step)."""
    if np is not None:
        return np.sort(rng.standard_normal(n).astype(np.float32))
    xs = [rng.random() for _ in range(n // 8)]
    xs.sort()
    return xs


def torch_loop(prep):
    """The torch step and the GPU's drain (what a block ends with)."""
    import numpy as np
    import torch
    dev = torch.device("cuda")
    model = torch.nn.Sequential(torch.nn.Linear(1024, 2048), torch.nn.ReLU(), torch.nn.Linear(2048, 1024)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    pinned = [torch.empty(256 * 1024, dtype=torch.float32).pin_memory() for _ in range(2)]

    def step(i):
        a = prep_batch(prep, rng, np)
        buf = pinned[i % 2]
        buf[: min(a.size, buf.numel())].copy_(torch.from_numpy(a[: buf.numel()]))
        x = buf.to(dev, non_blocking=True).view(256, 1024)
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step, torch.cuda.synchronize


def fake_loop(cudart, prep):
    """The same shape through the runtime test double (it runs nothing)."""
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

    def step(i):
        prep_batch(prep, rng, None)
        rt.cudaMemcpyAsync(dev, host, ctypes.c_size_t(1 << 20), 1, None)
        for _ in range(12):  # forward, backward and the optimizer's kernels
            rt.cudaLaunchKernel(kernel, Dim3(1, 1, 1), Dim3(256, 1, 1), None, 0, None)

    return step, rt.cudaDeviceSynchronize


def run_steps(step, n, first):
    """n steps from index `first`; each step's time from the previous step's end (the first from now), us."""
    times = []
    last = time.perf_counter()
    for i in range(first, first + n):
        step(i)
        now = time.perf_counter()
        times.append(round((now - last) * 1e6, 1))
        last = now
    return times


def child(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--prep", type=int, default=60000)
    ap.add_argument("--warm", type=float, default=3.0)
    ap.add_argument("--cpu")
    a = ap.parse_args(argv)
    step, drain = fake_loop(a.cpu, a.prep) if a.cpu else torch_loop(a.prep)
    done = 0
    t0 = time.perf_counter()
    while done < 20 or time.perf_counter() - t0 < a.warm:  # past the shim's start-up work too
        step(done)
        done += 1
    drain()
    print(json.dumps({"ready": True, "pid": os.getpid(), "warm_steps": done, "cpus": sorted(os.sched_getaffinity(0))}),
          flush=True)
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["quit"]:
            break
        if len(words) != 2 or words[0] != "run" or not words[1].isdigit():
            print(json.dumps({"error": f"not a command: {line.strip()!r}"}), flush=True)
            continue
        times = run_steps(step, int(words[1]), done)
        done += int(words[1])
        drain()  # the next worker's block starts on an idle GPU
        print(json.dumps({"times_us": times}), flush=True)
    drain()


def pick_cpus(spec, allowed):
    """The CPUs every worker is pinned to: "none" (no pinning: []), a list ("2-5", "2,3,8"), or
    "auto": 4 of the allowed CPUs past the first two (often the busiest with interrupts), when
    at least 8 are allowed, else none. One set for all workers: each block runs on the same
    cores (their clocks, their memory node), whichever worker's turn it is."""
    allowed = sorted(allowed)
    if spec == "none":
        return []
    if spec == "auto":
        return allowed[2:6] if len(allowed) >= 8 else []
    cpus = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()):
            raise ValueError(f"--cpus {spec}: not none, auto or a list like 2-5,8")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    if not cpus <= set(allowed):
        raise ValueError(f"--cpus {spec}: CPUs {sorted(cpus - set(allowed))} are not allowed to this process")
    return sorted(cpus)


class Worker:
    def __init__(self, side, pair, cmd, env, out, log, cpus=()):
        self.side, self.pair, self.out = side, pair, out
        self.cmd = cmd
        self.ready = None  # its first line: pid, warm-up steps, the CPUs it may run on
        self.log = log  # its stderr: a file, never a pipe nobody reads while it runs
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None  # inherited by `cudashim run`'s child
        with open(log, "w") as err:
            self.p = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                      text=True, bufsize=1, preexec_fn=pin)

    def tail(self):
        try:
            return open(self.log).read()[-1500:]
        except OSError:
            return ""

    def name(self):
        return f"{self.side} worker {self.pair + 1} ({' '.join(self.cmd[:3])} ...)"

    def read_json(self, timeout):
        sel = selectors.DefaultSelector()
        sel.register(self.p.stdout, selectors.EVENT_READ)
        end = time.time() + timeout
        while True:
            left = end - time.time()
            if left <= 0 or not sel.select(left):
                raise RuntimeError(f"{self.name()}: no answer in {timeout:.0f} s")
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name()}: ended (exit {self.p.wait()}): {self.tail()}")
            if line.startswith("{"):
                doc = json.loads(line)
                if "error" in doc:
                    raise RuntimeError(f"{self.name()}: {doc['error']}")
                return doc

    def block(self, steps):
        self.p.stdin.write(f"run {steps}\n")
        self.p.stdin.flush()
        return self.read_json(120)["times_us"]

    def quit(self):
        try:
            self.p.stdin.write("quit\n")
            self.p.stdin.close()
        except OSError:
            pass

    def finish(self):
        try:
            rc = self.p.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            rc = self.p.wait()
        if rc != 0:
            raise RuntimeError(f"{self.name()}: exit {rc}: {self.tail()}")

    def self_cost(self):
        if self.out is None:
            return None
        reps = [f for f in glob.glob(os.path.join(self.out, "**", "cudashim-*.json"), recursive=True)
                if not f.endswith("-crash.json")]
        costs = [c for c in (json.load(open(f)).get("self_cost") for f in reps) if c]
        return max(costs, key=lambda c: c["wall_ns"]) if costs else None


def run(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=100.0, help="time for the blocks (start-up and exits not counted)")
    ap.add_argument("--total", type=float, help="no new round past this many seconds from the start (start-up counted)")
    ap.add_argument("--block", type=int, default=150, help="steps a block")
    ap.add_argument("--drop", type=int, default=20, help="a block's first steps left out")
    ap.add_argument("--warm", type=float, default=3.0, help="seconds of steps a worker runs before its first block")
    ap.add_argument("--prep", type=int, default=60000)
    ap.add_argument("--cpu", metavar="FAKECUDA_DIR")
    ap.add_argument("--cpus", default="none", help="pin every worker to these CPUs: none, auto or a list (2-5,8)")
    a = ap.parse_args(argv)
    if a.pairs < 1 or a.block <= a.drop or a.drop < 0:
        raise SystemExit("selfcost.py run: --pairs >= 1 and --block > --drop >= 0")
    try:
        a.pinned = pick_cpus(a.cpus, os.sched_getaffinity(0))
    except ValueError as e:
        raise SystemExit(f"selfcost.py run: {e}")
    os.makedirs(a.out, exist_ok=True)
    me = os.path.abspath(__file__)
    kid = [sys.executable, me, "child", "--prep", str(a.prep), "--warm", str(a.warm)]
    env = dict(os.environ)
    for k in [k for k in env if k.startswith("CUDASHIM_")]:
        del env[k]  # the default mode: nothing set
    if a.cpu:
        kid += ["--cpu", sorted(glob.glob(os.path.join(a.cpu, "libcudart.so*")))[0]]
        env["LD_LIBRARY_PATH"] = a.cpu
    t0 = time.time()
    outs = tempfile.TemporaryDirectory()
    workers = {}
    try:
        for pair in range(a.pairs):
            log = os.path.join(a.out, f"worker-{{}}-{pair + 1}.log")
            workers[("bare", pair)] = Worker("bare", pair, kid, env, None, log.format("bare"), a.pinned)
            out = os.path.join(outs.name, f"pair{pair + 1}")
            workers[("shim", pair)] = Worker("shim", pair, [a.cli, "run", "--quiet", "--out", out] + kid, env, out,
                                             log.format("shim"), a.pinned)
        for w in workers.values():
            w.ready = w.read_json(180)
        started = time.time()
        print(f"{len(workers)} workers ready in {started - t0:.1f} s", flush=True)
        rounds = []
        while time.time() - started < a.seconds and (a.total is None or time.time() - t0 < a.total):
            rnd = len(rounds)
            row = []
            for pair in range(a.pairs):
                order = ("bare", "shim") if (rnd + pair) % 2 == 0 else ("shim", "bare")
                unit = {"pair": pair + 1, "order": "-".join(order)}
                for side in order:
                    unit[side] = workers[(side, pair)].block(a.block)
                row.append(unit)
            rounds.append(row)
            r = [block_ms(u["shim"], a.drop) / block_ms(u["bare"], a.drop) for u in row]
            print(f"round {rnd + 1}: shim/bare {' '.join(f'{x:.4f}' for x in r)}", flush=True)
            write(a, argv, me, t0, rounds, [], workers, with_table=False)  # a run cut short leaves its figures
        for w in workers.values():
            w.quit()  # all at once: their exits (the shim's reports) overlap
        for w in workers.values():
            w.finish()
        costs = [workers[("shim", p)].self_cost() for p in range(a.pairs)]
    finally:
        for w in workers.values():
            if w.p.poll() is None:
                w.p.kill()
        outs.cleanup()
    print(write(a, argv, me, t0, rounds, costs, workers))


def write(a, argv, me, t0, rounds, costs, workers, with_table=True):
    """DIR/selfcost.json and (with_table) DIR/selfcost.md from the rounds so far; returns the table."""
    doc = {"command": " ".join([os.path.relpath(me), "run"] + argv), "mode": "cpu (test double)" if a.cpu else "gpu (torch)",
           "pairs": a.pairs, "block": a.block, "drop": a.drop, "warm": a.warm, "prep": a.prep,
           "cpus": a.pinned, "cpus_allowed": len(os.sched_getaffinity(0)),
           "workers": [{"side": w.side, "pair": w.pair + 1, **w.ready} for w in workers.values() if w.ready],
           "seconds": round(time.time() - t0, 1), "rounds": rounds, "self_cost": costs}
    with open(os.path.join(a.out, "selfcost.json"), "w") as f:
        json.dump(doc, f)
    if not with_table:
        return ""
    text = table(doc)
    with open(os.path.join(a.out, "selfcost.md"), "w") as f:
        f.write(text)
    return text


# ---- the statistics (pure functions: tests/cli/selfcost_stats.py checks them against known answers)

def block_ms(times_us, drop):
    """A block's time: the median of its steps after the first `drop`, ms."""
    return statistics.median(times_us[drop:]) / 1e3


def block_mean_ms(times_us, drop):
    return statistics.fmean(times_us[drop:]) / 1e3


def sign_interval(xs, conf=0.95):
    """The distribution-free interval of the median (the sign test's): the order statistics
    x_(k), x_(n+1-k) with the largest k whose two tails P(Bin(n, 1/2) < k) hold at most 1-conf.
    None when n is too small for any (n < 6 at 95 %)."""
    xs = sorted(xs)
    n = len(xs)
    alpha = (1 - conf) / 2
    k, tail = 0, 0.0
    while k < n:
        nxt = tail + math.comb(n, k) / 2 ** n  # P(Bin <= k)
        if nxt > alpha:
            break
        tail, k = nxt, k + 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k]


def bootstrap_interval(groups, conf=0.95, reps=BOOTSTRAP_REPS, seed=BOOTSTRAP_SEED):
    """The median of the pooled values, resampled in two stages: the groups (pairs) with
    replacement, then each picked group's values (rounds) with replacement; the (1-conf)/2 and
    (1+conf)/2 quantiles of the resampled medians (nearest rank). Seeded: one table, one answer."""
    rng = random.Random(seed)
    groups = [list(g) for g in groups if g]
    meds = []
    for _ in range(reps):
        pool = []
        for _ in range(len(groups)):
            g = groups[rng.randrange(len(groups))]
            pool.extend(g[rng.randrange(len(g))] for _ in range(len(g)))
        meds.append(statistics.median(pool))
    meds.sort()
    lo = meds[max(0, math.ceil((1 - conf) / 2 * reps) - 1)]
    hi = meds[min(reps - 1, math.ceil((1 + conf) / 2 * reps) - 1)]
    return lo, hi


def pct(log_ratio):
    return (math.exp(log_ratio) - 1) * 100


def verdict(est_pct, lo_pct, hi_pct, goal=GOAL_PCT):
    """The line the step prints: settled when the interval lies on one side of the goal."""
    half = (hi_pct - lo_pct) / 2
    said = f"shim costs {est_pct:+.2f} % +- {half:.2f} % (95 %: {lo_pct:+.2f} to {hi_pct:+.2f} %)"
    if hi_pct < goal:
        return f"settled: {said}, below the {goal} % goal"
    if lo_pct > goal:
        return f"settled: {said}, above the {goal} % goal"
    return f"not settled: {said}; the interval reaches the {goal} % goal"


def summarize(doc):
    """Every figure of the table from the blocks' step times."""
    drop = doc["drop"]
    units = [u for row in doc["rounds"] for u in row]
    if not units:
        raise ValueError("no rounds")
    by_pair = {}
    for u in units:
        by_pair.setdefault(u["pair"], []).append(math.log(block_ms(u["shim"], drop) / block_ms(u["bare"], drop)))
    logs = [x for g in by_pair.values() for x in g]
    est = statistics.median(logs)
    lo, hi = bootstrap_interval(list(by_pair.values()))
    sign = sign_interval(logs)
    mean_logs = [math.log(block_mean_ms(u["shim"], drop) / block_mean_ms(u["bare"], drop)) for u in units]
    s = {"units": len(units), "rounds": len(doc["rounds"]), "pairs": len(by_pair),
         "bare_ms": statistics.median(block_ms(u["bare"], drop) for u in units),
         "shim_ms": statistics.median(block_ms(u["shim"], drop) for u in units),
         "est_pct": pct(est), "lo_pct": pct(lo), "hi_pct": pct(hi),
         "sign_pct": (pct(sign[0]), pct(sign[1])) if sign else None,
         "mean_est_pct": pct(statistics.median(mean_logs)),
         "per_pair": {p: (pct(statistics.median(g)), len(g)) for p, g in sorted(by_pair.items())}}
    s["verdict"] = verdict(s["est_pct"], s["lo_pct"], s["hi_pct"])
    costs = [c for c in doc.get("self_cost") or [] if c]
    s["costs"] = costs
    s["own"] = [c["share_of_wall_pct"] for c in costs]
    s["own_steady"] = [c["steady"]["share_of_wall_pct"] for c in costs if c.get("steady")]
    return s


def table(doc):
    s = summarize(doc)
    sign = f"{s['sign_pct'][0]:+.2f} to {s['sign_pct'][1]:+.2f} %" if s["sign_pct"] else "too few units"
    lines = [f"# cudashim's default mode on a host-bound loop: bare vs `cudashim run`, {doc['mode']}", "",
             f"**{s['verdict']}**", "",
             f"- command: `{doc['command']}`",
             f"- {s['pairs']} pairs of worker processes (bare and shim), {s['rounds']} rounds: {s['units']} units (a pair's "
             f"shim block against its bare block of the round, ABBA); {doc['block']} steps a block, the first {doc['drop']} "
             f"left out, after {doc['warm']} s of warm-up a worker; batch preparation: {doc['prep']} values sorted a step; "
             f"{doc['seconds']} s in all; "
             + (f"every worker pinned to CPUs {','.join(map(str, doc['cpus']))} (of {doc.get('cpus_allowed')} allowed)"
                if doc.get("cpus") else "workers not pinned"),
             f"- a block's time: the median of its steps; the estimate: the median of the units' ratios shim/bare; the 95 % "
             f"interval: a bootstrap over pairs, then rounds within a pair ({BOOTSTRAP_REPS} resamples, seed "
             f"{BOOTSTRAP_SEED}); the sign test's interval over all units (blind to a worker's own luck): {sign}",
             f"- ratio of the blocks' mean step times instead (a once-a-second burst shows there, not in the median): "
             f"{s['mean_est_pct']:+.2f} %", "",
             "| | step ms (median of blocks) |", "|---|---:|",
             f"| bare | {s['bare_ms']:.3f} |", f"| cudashim run | {s['shim_ms']:.3f} |", "",
             "| pair | units | shim vs bare (median of its units) |", "|---:|---:|---:|"]
    for p, (v, n) in s["per_pair"].items():
        lines.append(f"| {p} | {n} | {v:+.2f} % |")
    if s["own"]:
        lines += ["", f"- cudashim's own account (the shim workers' reports, self_cost.share_of_wall_pct): "
                      + ", ".join(f"{x:.3f} %" for x in s["own"])]
        if s["own_steady"]:
            lines.append("- of it, steady (self_cost.steady.share_of_wall_pct: the start-up work left out): "
                         + ", ".join(f"{x:.3f} %" for x in s["own_steady"]))
        parts = sorted({p for c in s["costs"] for p in (c.get("parts") or {})})
        if parts:
            lines += ["", "The flush thread's parts in the shim workers' reports (self_cost.parts): CPU and wall time per "
                          "second of the worker's wall time, us/s, median over the workers", "",
                      "| part | CPU us/s | wall us/s | costliest run us |", "|---|---:|---:|---:|"]
            for p in parts:
                got = [(c["parts"][p], c["wall_ns"]) for c in s["costs"] if p in (c.get("parts") or {})]
                lines.append(f"| {p} | {statistics.median(x['cpu_ns'] / w * 1e6 for x, w in got):.1f} | "
                             f"{statistics.median(x.get('wall_ns', 0) / w * 1e6 for x, w in got):.1f} | "
                             f"{statistics.median(x['max_ns'] / 1e3 for x, w in got):.1f} |")
    else:
        lines += ["", "- no self_cost in the reports"]
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
            text = table(doc)
        except (OSError, ValueError, KeyError, TypeError) as e:
            print(f"selfcost.py table: {sys.argv[2]} is not selfcost.py's figures: {e!r}", file=sys.stderr)
            return 1
        print(text, end="")
    else:
        run(sys.argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
