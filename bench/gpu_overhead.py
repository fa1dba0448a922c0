#!/usr/bin/env python3
"""gpu_overhead.py SHIM OUTDIR: cudashim's cost on real training loops, side by side.

For each model, every configuration runs as its own process, interleaved A B C D,
A B C D, ... (ROUNDS rounds); each process reports the median step time of its
measured steps; a configuration's figure is the median over rounds, and the table
gives its ratio to the baseline of the same run. Configurations:
  baseline     no shim
  observe      cudashim with call sites off (CUDASHIM_SITES=0): counters and ledger
  full         cudashim in full: call sites, sync findings, inventory, a cap enforced
               (CUDASHIM_MEM_CAP=100GiB, not binding)
  sync-debug   no shim, torch.cuda.set_sync_debug_mode("warn") (PyTorch's own detector)
Also: compute-sanitizer's leak check on a short run (slowdown factor), and the
start-up cost of the shim on /bin/true and on a small CUDA program.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROUNDS = int(os.environ.get("ROUNDS", "3"))
STEPS = int(os.environ.get("STEPS", "80"))


def run_step(model, env_extra, shim, out, steps=STEPS, prefix=(), timeout=300):
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(env_extra)
    if env_extra.get("_shim"):
        env.pop("_shim")
        env["LD_PRELOAD"] = shim
        env["CUDASHIM_OUT"] = out
        env["CUDASHIM_LOG_LEVEL"] = "error"
    p = subprocess.run([*prefix, sys.executable, os.path.join(HERE, "gpu_train_step.py"), model, str(steps)], env=env,
                       capture_output=True, text=True, timeout=timeout)
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if p.returncode != 0 or not lines:
        raise RuntimeError(f"{model} {env_extra}: exit {p.returncode}: {p.stderr[-1500:]}")
    return json.loads(lines[-1])["median_ms"]


def main():
    shim, outdir = sys.argv[1], sys.argv[2]
    work = tempfile.mkdtemp()
    configs = [("baseline", {}), ("observe", {"_shim": 1, "CUDASHIM_SITES": "0"}),
               ("enforce", {"_shim": 1, "CUDASHIM_SITES": "0", "CUDASHIM_MEM_CAP": "100GiB"}),
               ("full", {"_shim": 1, "CUDASHIM_MEM_CAP": "100GiB"}), ("sync-debug", {"SYNC_DEBUG": "1"})]
    # CONFIGS=baseline,enforce,full runs a subset (baseline is always kept).
    wanted = set(os.environ.get("CONFIGS", "baseline,observe,full,sync-debug").split(",")) | {"baseline"}
    configs = [c for c in configs if c[0] in wanted]
    rows = []
    for model in ("transformer", "cnn"):
        res = {c: [] for c, _ in configs}
        for r in range(ROUNDS):
            order = configs[r % len(configs):] + configs[:r % len(configs)]
            for name, env in order:
                res[name].append(run_step(model, dict(env), shim, work))
                print(f"[bench] {model} round {r} {name}: {res[name][-1]:.2f} ms", flush=True)
        base = statistics.median(res["baseline"])
        spread = (max(res["baseline"]) - min(res["baseline"])) / base * 100
        for name, _ in configs:
            med = statistics.median(res[name])
            # Paired: each round's figure over the same round's baseline (the runs of one
            # round follow one another within seconds, so slow drift cancels).
            paired = sorted(x / b for x, b in zip(res[name], res["baseline"]))
            rows.append((model, name, med, med / base, [round(x, 2) for x in res[name]], spread,
                         (statistics.median(paired), paired[0], paired[-1])))
    san = shutil.which("compute-sanitizer") or "/usr/local/cuda/bin/compute-sanitizer"
    san_row = "compute-sanitizer not found"
    extras = os.environ.get("SKIP_EXTRAS") != "1"
    if not extras:
        san_row = "compute-sanitizer: not run in this call (SKIP_EXTRAS=1)"
    if extras and os.path.exists(san):
        try:
            t0 = time.monotonic()
            base_ms = run_step("cnn", {}, shim, work, steps=5)
            t1 = time.monotonic()
            san_ms = run_step("cnn", {}, shim, work, steps=5, prefix=(san, "--tool", "memcheck", "--leak-check", "full"),
                              timeout=150)
            t2 = time.monotonic()
            san_row = (f"compute-sanitizer memcheck --leak-check full, cnn, 5 steps: median step {san_ms:.1f} ms vs {base_ms:.1f} ms "
                       f"({san_ms / base_ms:.1f}x); whole process {t2 - t1:.1f} s vs {t1 - t0:.1f} s ({(t2 - t1) / (t1 - t0):.1f}x)")
        except Exception as e:  # a timeout is a result too
            san_row = f"compute-sanitizer: {e}"[:300]
    # start-up: 30 alternating runs of /bin/true, with and without the shim
    def timed(cmd, with_shim):
        env = dict(os.environ, CUDASHIM_OUT=work)
        env.pop("LD_PRELOAD", None)
        if with_shim:
            env["LD_PRELOAD"] = shim
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return time.perf_counter() - t
    a, b = [0.0], [0.0]
    for i in range(30 if extras else 0):
        for w in ((False, True) if i % 2 else (True, False)):
            (b if w else a).append(timed(["/bin/true"], w))
    start_row = (f"/bin/true, 30 runs each, alternating: median {statistics.median(a) * 1e3:.2f} ms without, "
                 f"{statistics.median(b) * 1e3:.2f} ms with the shim ({(statistics.median(b) - statistics.median(a)) * 1e3:+.2f} ms)")
    if not extras:
        start_row = "not run in this call (SKIP_EXTRAS=1)"
    lines = ["| model | configuration | median step ms (median of rounds) | ratio of medians | paired ratio: median [min, max] over rounds | rounds (ms) |",
             "|---|---|---:|---:|---|---|"]
    for model, name, med, ratio, runs, spread, (pm, plo, phi) in rows:
        lines.append(f"| {model} | {name} | {med:.2f} | {ratio:.4f} ({(ratio - 1) * 100:+.2f}%) | "
                     f"{(pm - 1) * 100:+.2f}% [{(plo - 1) * 100:+.2f}%, {(phi - 1) * 100:+.2f}%] | {runs} |")
    spreads = {m: s for m, _, _, _, _, s, _ in rows}
    text = "\n".join(lines) + "\n\n" + "\n".join([
        f"- baseline spread between rounds (max-min)/median: " + ", ".join(f"{m} {s:.2f}%" for m, s in spreads.items()),
        f"- {san_row}", f"- start-up: {start_row}",
        "- Nsight Systems: not run (nsys is not on this host's PATH; the copy inside Nsight Compute could not "
        "make a report here, KINDS.md 2026-11-04)"])
    with open(os.path.join(outdir, "results-overhead.md"), "w") as f:
        f.write(f"# cudashim overhead on training loops (H200)\n\n- date: {time.strftime('%Y-%m-%d %H:%MZ', time.gmtime())}\n"
                f"- command: `ROUNDS={ROUNDS} STEPS={STEPS} CONFIGS={','.join(c for c, _ in configs)} python3 bench/gpu_overhead.py <shim> $OUT` ({ROUNDS} rounds x {STEPS} measured steps, interleaved)\n\n" + text + "\n")
    print(text)


if __name__ == "__main__":
    main()
