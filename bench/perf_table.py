#!/usr/bin/env python3
"""perf_table.py CARRY OUTDIR: the performance table (bench/results/perf-table-h200-2026-11-29.md), in one call on the GPU host.

Every figure is a ratio measured side by side in this one run: configurations of a workload
run as separate processes interleaved A B C, B C A, C A B, ... (rotating, so no configuration
always follows another), each process reports the median of its measured steps, and a row
gives the median over rounds of (this configuration / the baseline of the same round), with
the smallest and largest of those per-round ratios. No absolute time stands alone.

CARRY holds the prebuilt binaries (bench/perf_prebuild.sh): shim/libcudashim.so,
shim/cudashim, bench/bench_hook_overhead + bench/libcuda.so.1 (the test double),
bench/pool_bench, bench/alloc_train. bench/libtorch_train is built here (it needs the
host's torch). Writes OUTDIR/perf-table.md (the table to commit) and OUTDIR/perf-raw.jsonl.

Sections run in order of importance under one deadline (BUDGET_S, default 540 s from the
start): a section that would not fit is listed as not run, never cut silently.
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
T_START = time.monotonic()
BUDGET = float(os.environ.get("BUDGET_S", "540"))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
TRAIN_STEPS = int(os.environ.get("TRAIN_STEPS", "150"))
TRAIN_WARMUP = int(os.environ.get("TRAIN_WARMUP", "40"))

carry, outdir = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
SHIM = os.path.join(carry, "shim", "libcudashim.so")
CLI = os.path.join(carry, "shim", "cudashim")
WORK = tempfile.mkdtemp(prefix="perf-table-")
raw = open(os.path.join(outdir, "perf-raw.jsonl"), "w")
lines = []  # the markdown body
summary = []  # (workload, row, ratio text, goal, met)


def left():
    return BUDGET - (time.monotonic() - T_START)


def log(msg):
    print(f"[perf {time.monotonic() - T_START:6.1f}s] {msg}", flush=True)


def record(kind, **kw):
    raw.write(json.dumps({"kind": kind, **kw}) + "\n")
    raw.flush()


def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e:  # a fact we cannot read is said, not fatal
        return f"(unavailable: {e})"


def env_for(cfg, out):
    """The environment of one configuration: no shim, or the shim with cfg's settings."""
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("CUDASHIM_") or k in ("LD_PRELOAD", "SYNC_DEBUG"):
            env.pop(k)
    if cfg.get("shim"):
        env.update(LD_PRELOAD=SHIM, CUDASHIM_OUT=out, CUDASHIM_LOG_LEVEL="error")
    env.update(cfg.get("env", {}))
    return env


def run_json(cmd, env, timeout):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    js = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not js:
        raise RuntimeError(f"{' '.join(cmd[:3])}...: exit {p.returncode}: {p.stderr.strip()[-800:]}")
    return json.loads(js[-1])


def interleaved(name, cmd, configs, rounds, timeout, key="median_ms"):
    """Runs each configuration once per round, rotating the order; returns {cfg: [results]}."""
    res = {c: [] for c in configs}
    names = list(configs)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for c in order:
            out = os.path.join(WORK, f"{name}-{c}-{r}")
            os.makedirs(out, exist_ok=True)
            js = run_json(cmd, env_for(configs[c], out), timeout)
            js["_out"] = out
            res[c].append(js)
            record("run", workload=name, config=c, round=r, result={k: v for k, v in js.items() if k != "_out"})
            log(f"{name} round {r} {c}: {js[key]:.3f} ms")
    return res


def paired(res, cfg, base="baseline", key="median_ms"):
    """Median, min and max over rounds of cfg/base (same round), and the medians themselves."""
    ratios = sorted(a[key] / b[key] for a, b in zip(res[cfg], res[base]))
    return statistics.median(ratios), ratios[0], ratios[-1], statistics.median(x[key] for x in res[cfg])


def verdict(med, lo, hi, goal):
    """yes / no when every round agrees, else what the median says and that the rounds span the goal."""
    if hi <= goal:
        return "yes"
    if lo > goal:
        return "**no**"
    return ("yes by the median" if med <= goal else "**no** by the median") + "; rounds span the goal (noise)"


def pct(x):
    return f"{(x - 1) * 100:+.2f}%"


def ratio_table(res, configs, base, goal_cfgs, goal, workload, key="median_ms"):
    out = ["| configuration | what it is | median step ms | paired ratio to no shim: median [min, max] over rounds |",
           "|---|---|---:|---|"]
    for c, cfg in configs.items():
        m, lo, hi, med = paired(res, c, base, key)
        out.append(f"| {c} | {cfg['what']} | {med:.3f} | {pct(m)} [{pct(lo)}, {pct(hi)}] |")
        if c in goal_cfgs:
            summary.append((workload, c, f"{pct(m)} [{pct(lo)}, {pct(hi)}]", f"<= +{goal:g}%",
                            verdict((m - 1) * 100, (lo - 1) * 100, (hi - 1) * 100, goal)))
    spread = [x[key] for x in res[base]]
    out.append("")
    out.append(f"Baseline spread between its {len(spread)} processes, (max - min) / median: "
               f"{(max(spread) - min(spread)) / statistics.median(spread) * 100:.2f}%.")
    return out


def report_of(out):
    reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
    return max(reps, key=lambda r: sum(a["calls"] for a in r.get("api", {}).values())) if reps else None


def hooked_calls(rep):
    return sum(a["calls"] for a in rep.get("api", {}).values())


SHIM_CONFIGS = {
    "baseline": {"what": "no shim"},
    "observe": {"what": "cudashim observing only: counters, ledger, inventory; no call sites (CUDASHIM_SITES=0)",
                "shim": 1, "env": {"CUDASHIM_SITES": "0"}},
    "full": {"what": "cudashim in full: call sites and sync findings, inventory, a cap enforced "
                     "(CUDASHIM_MEM_CAP=100GiB, not binding)", "shim": 1, "env": {"CUDASHIM_MEM_CAP": "100GiB"}},
}
hook_costs = {}


# ------------------------------------------------------------------------------------ sections
def section_facts():
    gpu = sh("nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader")
    torch_v = sh(f"{sys.executable} -c 'import torch, sys; print(torch.__version__, torch.version.cuda, sys.version.split()[0])'")
    cs = "/sys/devices/system/clocksource/clocksource0/"
    flags = set(open("/proc/cpuinfo").read().split())
    cpu = re.search(r"model name\s*:\s*(.*)", open("/proc/cpuinfo").read())
    commit = open(os.path.join(carry, "perf-commit.txt")).read().strip() if os.path.exists(
        os.path.join(carry, "perf-commit.txt")) else "unknown"
    facts = [
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        f"- GPU, driver, memory: {gpu}",
        f"- torch, its CUDA, Python: {torch_v}",
        f"- host CPU: {cpu.group(1) if cpu else '?'}, {os.cpu_count()} CPUs; kernel {os.uname().release}",
        f"- clock source: {sh('cat ' + cs + 'current_clocksource')} (available: {sh('cat ' + cs + 'available_clocksource')}); "
        f"CPU flags: " + ", ".join(f"{f} {'yes' if f in flags else 'no'}" for f in ("constant_tsc", "nonstop_tsc", "tsc_known_freq")),
        f"- cudashim: commit {commit}, `{os.path.relpath(SHIM, ROOT) if SHIM.startswith(ROOT) else SHIM}` (stripped)",
        f"- command: `bash bench/perf_table.sh` (BUDGET_S={BUDGET:g}, ROUNDS={ROUNDS}, TRAIN_STEPS={TRAIN_STEPS}, "
        f"TRAIN_WARMUP={TRAIN_WARMUP}); prebuilt here with `bash bench/perf_prebuild.sh`",
    ]
    record("facts", text=facts)
    return facts


def section_hook_cost():
    bench = os.path.join(carry, "bench", "bench_hook_overhead")
    env = env_for({"shim": 1}, WORK)
    env["LD_LIBRARY_PATH"] = os.path.join(carry, "bench")
    p = subprocess.run([bench, "--rounds", "51", "--command", "bench/perf_table.sh"], env=env, capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        return [f"bench_hook_overhead failed (exit {p.returncode}): {p.stderr.strip()[-400:]}"]
    rows = [l for l in p.stdout.splitlines() if l.startswith("|")]
    for key, label in (("launch", "pass-through launch"), ("sync", "timed sync"), ("alloc", "alloc+free pair")):
        for l in rows:
            cells = [c.strip() for c in l.strip().strip("|").split("|")]
            if cells[0].startswith(label) and len(cells) == 8:  # the main table, not the per-round one
                hook_costs[key] = float(cells[4])
                summary.append(("per-call hook cost", cells[0], f"+{cells[4]} ns", cells[6] + " ns", cells[7]))
                break
    clock = re.search(r"host reference: (.*)", p.stdout)
    rep = report_of(WORK)
    record("hook_cost", table=rows)
    return ["Through the test-double driver on this host's CPU (no GPU in the call), "
            "`bench_hook_overhead --rounds 51`: wrapper against the double's own function, alternating by round.",
            "", *rows[:5], "", f"- {clock.group(1) if clock else ''}",
            f"- the clock the shim's wrappers read here (its report's blocking.clock): "
            f"{rep.get('blocking', {}).get('clock', '?') if rep else 'no report found'}"]


def section_primitives():
    p = subprocess.run([os.path.join(carry, "bench", "bench_primitives")], capture_output=True, text=True, timeout=60)
    record("primitives", text=p.stdout)
    return ["`bench_primitives` (bench/primitives.cpp): the building blocks of a hook on this host's CPU, one thread, "
            "uncontended, median of 31 batches of 10,000.", "", *p.stdout.strip().splitlines()]


def train_configs():
    return SHIM_CONFIGS


def section_training():
    out = []
    script = os.path.join(HERE, "gpu_train_step.py")
    for model in ("transformer", "cnn"):
        if left() < 160:
            out.append(f"- {model}: not run (time budget: {left():.0f} s left)")
            continue
        cfgs = {}
        for c, cfg in train_configs().items():
            cfgs[c] = dict(cfg)
            cfgs[c]["env"] = dict(cfg.get("env", {}), WARMUP=str(TRAIN_WARMUP))
        cfgs["baseline"]["env"]["SYNC_DEBUG_AB"] = "4"
        cfgs["full"]["env"]["SITES_AB"] = "4"
        res = interleaved(model, [sys.executable, script, model, str(TRAIN_STEPS)], cfgs, ROUNDS, 240)
        out.append(f"**{model}** ({TRAIN_WARMUP} warm-up steps, then the median of {TRAIN_STEPS} steps per process; "
                   f"{ROUNDS} rounds)")
        out.append("")
        out += ratio_table(res, train_configs(), "baseline", ("full",), 0.5, f"PyTorch {model}")
        # PyTorch's own detector, A/B inside the baseline processes
        sd = sorted(r["sync_debug_warn_ms"] / r["sync_debug_off_ms"] for r in res["baseline"])
        out.append(f"torch.cuda.set_sync_debug_mode(\"warn\"), alternated with mode 0 in 25-step blocks (4 pairs) "
                   f"inside each baseline process: {pct(statistics.median(sd))} [{pct(sd[0])}, {pct(sd[-1])}].")
        summary.append((f"PyTorch {model}", "sync-debug warn (peer)", f"{pct(statistics.median(sd))} [{pct(sd[0])}, {pct(sd[-1])}]",
                        "(peer)", ""))
        st = sorted(r["sites_on_ms"] / r["sites_off_ms"] for r in res["full"])
        out.append(f"cudashim's call sites (its sync analysis) turned on and off through cudashim_set_call_sites in "
                   f"25-step blocks (4 pairs) inside each full process: {pct(statistics.median(st))} "
                   f"[{pct(st[0])}, {pct(st[-1])}].")
        summary.append((f"PyTorch {model}", "full: call sites on vs off, same process", f"{pct(statistics.median(st))} "
                        f"[{pct(st[0])}, {pct(st[-1])}]", "", ""))
        # the shim's own counters: what one step costs it, priced with this host's per-call costs
        rep = report_of(res["full"][-1]["_out"])
        if rep:
            steps = res["full"][-1].get("total_steps", TRAIN_STEPS + TRAIN_WARMUP)
            api = rep["api"]
            total = hooked_calls(rep) / steps
            timed = sum(a["calls"] for a in api.values() if a.get("blocked_ns", 0) > 0 or a.get("time_ns", 0) > 0) / steps
            est = None
            if hook_costs:
                est = (total - timed) * hook_costs["launch"] + timed * hook_costs["sync"]
            step_ms = paired(res, "full")[3]
            out.append(f"The full run's own counters: {total:.0f} hooked calls per step (whole run / {steps} steps), "
                       f"{timed:.0f} of them timed" + (f"; at this host's per-call costs that is {est / 1e3:.1f} us, "
                                                     f"{est / 1e6 / step_ms * 100:.3f}% of a {step_ms:.2f} ms step, before "
                                                     f"the Python call-site reads" if est else "") + ".")
            record("counters", model=model, calls_per_step=total, timed_per_step=timed)
        out.append("")
    return out


def section_alloc_program():
    prog = os.path.join(carry, "bench", "alloc_train")
    cfgs = dict(SHIM_CONFIGS)
    cfgs["pool"] = {"what": "full, with the caching pool (CUDASHIM_POOL=1)", "shim": 1,
                    "env": {"CUDASHIM_MEM_CAP": "100GiB", "CUDASHIM_POOL": "1"}}
    res = interleaved("alloc_train", [prog, "--steps", "300", "--warmup", "30"], cfgs, 3, 120)
    out = ["`bench/alloc_train.cu`: each step allocates 16 buffers (64 KiB to 8 MiB) with cudaMalloc, fills them, reads "
           "back 64 bytes and frees them with cudaFree; 30 warm-up steps, median of 300; 3 rounds.", ""]
    out += ratio_table(res, cfgs, "baseline", ("full",), 0.5, "raw CUDA, allocation-heavy")
    m, lo, hi, _ = paired(res, "pool")
    summary.append(("raw CUDA, allocation-heavy", "pool", f"{pct(m)} [{pct(lo)}, {pct(hi)}] ({1 / m:.1f}x faster)", "faster", "yes" if m < 1 else "**no**"))
    return out


def section_pool_pairs():
    prog = os.path.join(carry, "bench", "pool_bench")
    env = env_for({"shim": 1}, WORK)
    p = subprocess.run([prog, "--rounds", "3", "--pairs", "200"], env=env, capture_output=True, text=True, timeout=240)
    if p.returncode != 0:
        return [f"pool_bench failed (exit {p.returncode}): {p.stderr.strip()[-400:]}"]
    record("pool_bench", text=p.stdout)
    speedups = []
    for l in p.stdout.splitlines():
        m = re.match(r"cuMemAlloc pair\s+(\d+)K\s+([\d.]+)\s+([\d.]+)", l)
        if m:
            speedups.append((int(m.group(1)), float(m.group(2)) / float(m.group(3))))
    small = [s for k, s in speedups if k <= 1024]
    big = [s for k, s in speedups if k > 1024]
    if speedups:
        summary.append(("pool, cuMemAlloc+cuMemFree pair", "4 KiB-1 MiB", f"{min(small):.0f}x-{max(small):.0f}x faster", ">= 50x",
                        "yes" if min(small) >= 50 else "**no**"))
        summary.append(("pool, cuMemAlloc+cuMemFree pair", "4-64 MiB", f"{min(big):.0f}x-{max(big):.0f}x faster", ">= 50x",
                        "yes" if min(big) >= 50 else "**no**"))
    return ["`pool_bench --rounds 3 --pairs 200` under the shim: raw = CUDASHIM_POOL=0, pool = CUDASHIM_POOL=1, "
            "processes alternated A B A B; each figure the median per-pair time of batches of 20 pairs.", "", "```",
            p.stdout.strip(), "```"]


LIBTORCH_EXE = os.path.join(WORK, "libtorch_train")
LIBTORCH_BUILD = None


def start_libtorch_build():
    """Builds bench/libtorch_train.cpp at the lowest CPU priority while the GPU sections run."""
    global LIBTORCH_BUILD
    LIBTORCH_BUILD = subprocess.Popen(["nice", "-n", "19", "bash", os.path.join(HERE, "build_libtorch_train.sh"),
                                       LIBTORCH_EXE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)


def section_libtorch():
    exe = LIBTORCH_EXE
    try:
        _, err = LIBTORCH_BUILD.communicate(timeout=max(10, left() - 60))
    except subprocess.TimeoutExpired:
        LIBTORCH_BUILD.kill()
        return ["libtorch_train: its build did not finish in the time left."]
    if LIBTORCH_BUILD.returncode != 0:
        return [f"libtorch_train did not build: {err.strip()[-400:]}"]
    out = []
    cfgs = {c: SHIM_CONFIGS[c] for c in ("baseline", "full")}
    for model in ("mlp", "conv"):
        if left() < 45:
            out.append(f"- {model}: not run (time budget)")
            continue
        res = interleaved(f"libtorch-{model}", [exe, "--model", model, "--steps", "300", "--warmup", "50"], cfgs, 3, 120)
        out.append(f"**libtorch {model}** (50 warm-up steps, median of 300; 3 rounds)")
        out.append("")
        out += ratio_table(res, cfgs, "baseline", ("full",), 0.5, f"libtorch C++ {model}")
        out.append("")
    return out


def section_startup():
    def once(cmd, with_shim):
        env = env_for({"shim": 1} if with_shim else {}, WORK)
        t = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError(f"{cmd[0]} exited {p.returncode}: {p.stderr.strip()[-300:]}")
        return (time.perf_counter() - t) * 1e3
    out = []
    for label, cmd, n in (("python3 -c \"import torch; torch.zeros(1, device='cuda')\"",
                           [sys.executable, "-c", "import torch; torch.zeros(1, device='cuda')"], 3),
                          ("alloc_train --steps 1 --warmup 0 (a CUDA C++ program: context, 17 allocations, exit)",
                           [os.path.join(carry, "bench", "alloc_train"), "--steps", "1", "--warmup", "0"], 20),
                          ("/bin/true", ["/bin/true"], 40)):
        a, b, d = [], [], []
        for i in range(n):
            pair = {}
            for w in ((False, True) if i % 2 else (True, False)):
                pair[w] = once(cmd, w)
            a.append(pair[False]), b.append(pair[True]), d.append(pair[True] - pair[False])
        med_d = statistics.median(d)
        out.append(f"| `{label}` | {n} | {statistics.median(a):.1f} | {statistics.median(b):.1f} | {med_d:+.2f} "
                   f"[{min(d):+.1f}, {max(d):+.1f}] |")
        record("startup", cmd=label, without=a, with_shim=b)
        if "torch" in label or "alloc_train" in label:
            summary.append(("start-up", label.split(" (")[0], f"{med_d:+.1f} ms [{min(d):+.1f}, {max(d):+.1f}]",
                            "<= +5 ms", verdict(med_d, min(d), max(d), 5)))
    return ["| command | pairs | median ms without | median ms with the shim | paired difference ms: median [min, max] |",
            "|---|---:|---:|---:|---|", *out]


def section_sanitizer():
    san = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    if not os.path.exists(san):
        return ["compute-sanitizer: not found on this host."]
    prog = os.path.join(carry, "bench", "alloc_train")
    args = [prog, "--steps", "20", "--warmup", "2"]
    rows = []
    try:
        times = {}
        for label, cmd, cfg in (("no tool", args, {}), ("cudashim full", args, SHIM_CONFIGS["full"]),
                                ("compute-sanitizer memcheck --leak-check full",
                                 [san, "--tool", "memcheck", "--leak-check", "full", *args], {})):
            out = os.path.join(WORK, "san-" + label.split()[0])
            os.makedirs(out, exist_ok=True)
            t = time.perf_counter()
            js = run_json(cmd, env_for(cfg, out), 90)
            times[label] = ((time.perf_counter() - t), js["median_ms"])
            rows.append(label)
        base_s, base_ms = times["no tool"]
        out = ["| tool | whole process s | slowdown | median step ms | slowdown |", "|---|---:|---:|---:|---:|"]
        for label in rows:
            s, ms = times[label]
            out.append(f"| {label} | {s:.2f} | {s / base_s:.2f}x | {ms:.3f} | {ms / base_ms:.2f}x |")
        s, ms = times[rows[-1]]
        summary.append(("raw CUDA, allocation-heavy, 20 steps", "compute-sanitizer leak check (peer)", f"{ms / base_ms:.1f}x step time", "(peer)", ""))
        return ["One short run each of `alloc_train --steps 20 --warmup 2` (leaks are what both report):", "", *out]
    except Exception as e:
        return [f"compute-sanitizer row: {str(e)[:400]}"]


def section_nsys():
    cands = [shutil.which("nsys")] + glob.glob("/usr/local/cuda*/bin/nsys") + glob.glob("/opt/nvidia/nsight-systems*/*/bin/nsys") \
        + glob.glob("/usr/local/cuda*/nsight-systems*/bin/nsys") + glob.glob("/opt/nvidia/nsight-compute*/host/*/nsys")
    cands = [c for c in cands if c and os.path.exists(c)]
    if not cands:
        return ["Nsight Systems: no `nsys` on this host (searched PATH, /usr/local/cuda*, /opt/nvidia): not run."]
    nsys = cands[0]
    script = os.path.join(HERE, "gpu_train_step.py")
    try:
        env = env_for({}, WORK)
        env["WARMUP"] = "20"
        base = run_json([sys.executable, script, "cnn", "60"], env, 120)
        rep = os.path.join(WORK, "nsys-cnn")
        traced = run_json([nsys, "profile", "-t", "cuda", "-o", rep, "--force-overwrite", "true", sys.executable, script,
                           "cnn", "60"], env, 180)
        r = traced["median_ms"] / base["median_ms"]
        summary.append(("PyTorch cnn", "nsys profile -t cuda (peer)", pct(r), "(peer)", ""))
        return [f"`{nsys} profile -t cuda`, cnn, 60 steps, one run against one without: {pct(r)} "
                f"({traced['median_ms']:.2f} vs {base['median_ms']:.2f} ms)"]
    except Exception as e:
        return [f"Nsight Systems ({nsys}): {str(e)[:400]}"]


def section_doctor():
    import site
    torch_lib = sh(f"{sys.executable} -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), \"lib\"))'")
    nvidia = [os.path.join(p, "nvidia") for p in site.getsitepackages() if os.path.isdir(os.path.join(p, "nvidia"))]
    cuobjdump = shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump"
    env = dict(os.environ, REPEATS="1")
    p = subprocess.run(["bash", os.path.join(HERE, "doctor_scan.sh"), "--cli", CLI, "--cuobjdump", cuobjdump, torch_lib,
                        *nvidia], capture_output=True, text=True, timeout=200, env=env)
    if p.returncode != 0:
        return [f"doctor_scan.sh failed (exit {p.returncode}): {p.stderr.strip()[-400:]}"]
    m = re.search(r"doctor is ([\d.]+)x faster", p.stdout)
    if m:
        summary.append(("offline inspection", "cudashim doctor vs cuobjdump --list-elf per file", f"{m.group(1)}x faster",
                        "faster", "yes" if float(m.group(1)) > 1 else "**no**"))
    return ["`bench/doctor_scan.sh` (REPEATS=1) over torch/lib and site-packages/nvidia:", "", "```", p.stdout.strip(), "```"]


SECTIONS = [  # (title, function, seconds it needs at least)
    ("Per-call hook cost", section_hook_cost, 15),
    ("Host primitives", section_primitives, 5),
    ("PyTorch training loops", section_training, 160),
    ("libtorch C++ training loop", section_libtorch, 60),
    ("Allocation-heavy raw CUDA program", section_alloc_program, 15),
    ("Pool: alloc+free pairs", section_pool_pairs, 10),
    ("compute-sanitizer leak check", section_sanitizer, 30),
    ("Start-up", section_startup, 35),
    ("Doctor scan against cuobjdump", section_doctor, 35),
    ("Nsight Systems", section_nsys, 5),
]


def main():
    head = ["# cudashim performance table (issue 9)", "", *section_facts(), ""]
    start_libtorch_build()
    body = []
    for title, fn, need in SECTIONS:
        body += [f"## {title}", ""]
        if left() < need:
            body += [f"Not run: {left():.0f} s of the {BUDGET:g} s budget left, the section needs about {need} s.", ""]
            log(f"skip {title}")
            continue
        log(f"section {title}")
        try:
            body += [*fn(), ""]
        except Exception as e:  # one failed section must not lose the others
            body += [f"Failed: {type(e).__name__}: {str(e)[:600]}", ""]
            log(f"{title} failed: {e}")
    table = ["## Summary", "", "| workload | row | measured (paired, median [min, max] over rounds) | goal | met? |",
             "|---|---|---|---|---|"]
    for w, r, m, g, ok in summary:
        table.append(f"| {w} | {r} | {m} | {g} | {ok} |")
    text = "\n".join(head + table + [""] + body) + f"\n(total {time.monotonic() - T_START:.0f} s)\n"
    open(os.path.join(outdir, "perf-table.md"), "w").write(text)
    print(text)


if __name__ == "__main__":
    main()
