"""jax_threads.py: which threads of a JAX training loop make which CUDA calls, and what the main
thread is doing meanwhile: the study behind issue 19's syncs on threads with no Python frame.

    cudashim run --out D python3 jax_threads.py [--planted] [--steps N]   # writes D/jax_threads.json
    python3 jax_threads.py --analyze D                                     # reads D's trace and that file

The program is jax_mlp.py's loop. While it runs, a thread of its own reads the main thread's
scheduler state (/proc/self/task/<tid>/stat: R running, S sleeping) every 0.2 ms, the way
py-spy's --idle tells waiting from working. --analyze prints, for the loop's window, each
thread's hooked calls (from the shim's Perfetto trace) and the main thread's states.
"""
import argparse
import bisect
import collections
import glob
import json
import os
import sys
import threading
import time


def run(args):
    import jax
    import numpy as np
    os.environ.setdefault("XLA_PYTHON_CLIENT_MEM_FRACTION", "0.3")
    jnp = jax.numpy
    B, F, H, C, LR = 512, 1024, 4096, 10, 1e-2

    def init(key):
        sizes = [(F, H), (H, H), (H, C)]
        keys = jax.random.split(key, len(sizes))
        return [(jax.random.normal(k, s, jnp.float32) / np.sqrt(s[0]), jnp.zeros(s[1], jnp.float32))
                for k, s in zip(keys, sizes)]

    def loss_fn(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.gelu(h @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step_fn(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads), loss

    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((B, F), dtype=np.float32) for _ in range(8)]
    ys = [rng.integers(0, C, B).astype(np.int32) for _ in range(8)]
    params = init(jax.random.PRNGKey(0))
    params, loss = step_fn(params, xs[0], ys[0])  # compile outside the window
    jax.block_until_ready(loss)

    main_tid, main_ident = threading.get_native_id(), threading.get_ident()
    states, stop = collections.Counter(), threading.Event()
    asleep = []  # (wall µs, line) of each sample that found the main thread asleep in the loop

    def watch():
        path = f"/proc/self/task/{main_tid}/stat"
        while not stop.is_set():
            with open(path) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            states[state] += 1
            if state in "SD":
                frame = sys._current_frames().get(main_ident)
                while frame is not None and frame.f_code.co_filename != __file__:
                    frame = frame.f_back  # out of jax's own frames, to the loop's line
                if frame is not None:
                    asleep.append((time.time_ns() / 1000, frame.f_lineno))
            time.sleep(0.0002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    total, seen = jnp.zeros(()), []
    t0 = time.time_ns()
    for step in range(args.steps):
        params, loss = step_fn(params, xs[step % 8], ys[step % 8])
        if args.planted:
            seen.append(jax.device_get(loss))
        else:
            total = total + loss
    if not args.planted:
        float(total)
    t1 = time.time_ns()
    stop.set()
    watcher.join()
    threads = {}
    for d in glob.glob("/proc/self/task/*"):
        try:
            with open(d + "/comm") as f:
                threads[os.path.basename(d)] = f.read().strip()
        except OSError:
            pass
    out = os.environ.get("CUDASHIM_OUT", ".")
    with open(os.path.join(out, "jax_threads.json"), "w") as f:
        json.dump({"planted": args.planted, "steps": args.steps, "loop_start_us": t0 / 1000, "loop_end_us": t1 / 1000,
                   "main_tid": main_tid, "watcher_tid": watcher.native_id, "main_states": states, "threads": threads,
                   "asleep": asleep}, f)
    print(f"jax_threads ({'planted' if args.planted else 'clean'}): {args.steps} steps in {(t1 - t0) / 1e6:.1f} ms, "
          f"main thread states {dict(states)}")


def analyze(folder):
    meta = json.load(open(os.path.join(folder, "jax_threads.json")))
    t0, t1 = meta["loop_start_us"], meta["loop_end_us"]
    print(f"{'planted' if meta['planted'] else 'clean'}: {meta['steps']} steps, {(t1 - t0) / 1000:.1f} ms; "
          f"main tid {meta['main_tid']}; main thread states {meta['main_states']}")
    for trace in glob.glob(os.path.join(folder, "*.trace")):
        events = json.load(open(trace))
        events = events.get("traceEvents", events) if isinstance(events, dict) else events
        per = collections.defaultdict(collections.Counter)
        dur = collections.defaultdict(float)
        where = collections.defaultdict(collections.Counter)
        seq = collections.defaultdict(list)
        for e in events:
            if e.get("ph") != "X" or not (t0 <= e["ts"] <= t1):
                continue
            key = (e["tid"], e["name"])
            per[e["tid"]][e["name"]] += 1
            dur[key] += e.get("dur", 0)
            where[key][str((e.get("args") or {}).get("where"))[:90]] += 1
            seq[e["tid"]].append(e["name"])
        # Where the main thread slept, by the copies of the other threads, as the wait sampler
        # decides (shim/wait_sampler.cpp): inside a read-back's call; inside another copy; else by
        # the first copy that starts after the sample (a read-back, or the batch's copy).
        copies = sorted((e["ts"], e["ts"] + e.get("dur", 0), e["name"]) for e in events
                        if e.get("ph") == "X" and t0 <= e["ts"] <= t1 and e["tid"] != meta["main_tid"] and
                        e["name"] in ("cuMemcpyDtoHAsync_v2", "cuMemcpyHtoDAsync_v2"))
        starts = [c[0] for c in copies]
        kinds = collections.defaultdict(collections.Counter)
        for ts, line in meta.get("asleep", []):
            k = bisect.bisect_right(starts, ts)
            inside = [c for c in copies[max(0, k - 8):k] if c[1] >= ts]
            if any(c[2] == "cuMemcpyDtoHAsync_v2" for c in inside):
                kinds["in a read-back (counted)"][line] += 1
            elif inside:
                kinds["in another copy (dropped)"][line] += 1
            elif k < len(copies) and copies[k][2] == "cuMemcpyDtoHAsync_v2":
                kinds["next copy a read-back (counted)"][line] += 1
            else:
                kinds["next copy the batch's (dropped)"][line] += 1
        print(f"  main thread asleep in the loop, {len(meta.get('asleep', []))} samples of the watcher, by the sampler's rule:")
        for what, lines in sorted(kinds.items()):
            print(f"    {what:34} " + ", ".join(f"line {ln}: {c}" for ln, c in lines.most_common(4)))
        for tid, calls in sorted(per.items()):
            name = meta["threads"].get(str(tid), "?")
            print(f"  tid {tid} ({name}{', main' if tid == meta['main_tid'] else ''}):")
            for api, n in calls.most_common():
                w = ", ".join(f"{k} x{v}" for k, v in where[(tid, api)].most_common(2))
                print(f"    {api:28} {n:6}  {dur[(tid, api)] / 1000:9.1f} ms  at {w}")
            print("    first calls: " + " ".join(seq[tid][:14]))
    for rep in glob.glob(os.path.join(folder, "*.json")):
        if rep.endswith("jax_threads.json"):
            continue
        r = json.load(open(rep))
        for f in r.get("findings", []):
            sites = "; ".join(f"{s['api']} {s['where']} x{s['count']} ({s['steps']} steps)" for s in f["sites"][:3])
            print(f"  finding {f['id']} {f['severity']} [{f.get('framework')}] x{f['count']}: {sites}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--planted", action="store_true")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--analyze", metavar="DIR")
    a = p.parse_args()
    sys.exit(analyze(a.analyze) if a.analyze else run(a))
