#!/usr/bin/env python3
"""idle_loops.py: four loops of known character, and the GPU idle share of each by torch.profiler.

The reference for the shim's GPU-time measurement (issue 20): each loop runs a few warm-up
steps, is timed without the profiler, then profiled with torch.profiler (CUPTI: kernel,
memcpy and memset activity). Its steady-state window is one record_function range around
K steps, opened and closed after a torch.cuda.synchronize(); the GPU is busy for the union
of the device activity intervals inside that window, idle for the rest.

  gpu-bound     chained 8192x8192 bf16 matmuls, no host work (expected: idle near 0 %)
  input-bound   15 ms of CPU batch preparation on the main thread, then a pinned non_blocking
                copy and a few ms of MLP step that overlap the next preparation (mostly idle)
  sync-bound    the overlap stopped: about 8 ms of matmuls, a .item() read-back, then 8 ms of
                CPU preparation while the GPU waits (idle about half the step)
  launch-bound  2000 tiny elementwise kernels a step: the GPU waits for each launch
  cnn-readback  issue 36's new user: a torchvision ResNet-18 trained on random 64x64 images
                (batch 128, no DataLoader) with an f-string of the loss printed every step: a
                cheap read-back a step, the GPU waiting on the host's launches (not in the
                default set: --only cnn-readback; idle_compare.py --split runs it)
The expectations are estimates; the measured table is the reference.

Prints a markdown table (loop, step ms, GPU busy %, idle %); --json FILE writes the numbers.
Each loop takes well under 15 s on an H200; the whole script about a minute with start-up.
"""
import argparse
import json
import os
import tempfile
import time

from harness import need_torch_cuda

DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
WINDOW = "idle_loops.window"
MAX_DEVICE_EVENTS = 20000  # bounds the trace (a launch-bound step is 2000 kernels)


def cpu_work(seconds, t):
    """Real CPU work on the main thread for SECONDS: elementwise passes over a host tensor."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        t = (t * 1.0001).tanh_()
    return t


def gpu_bound(torch):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90.5  # keeps the chain's scale

    def step():
        x = a
        for _ in range(8):
            x = x @ b
        return x
    return step, 8


def mlp(torch, width):
    net = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.GELU(), torch.nn.Linear(width, width)).cuda()
    return net, torch.optim.SGD(net.parameters(), lr=1e-3)


def input_bound(torch):
    net, opt = mlp(torch, 4096)
    host = torch.randn(512, 4096)

    def step():
        x = cpu_work(0.015, host)  # the batch, made on the CPU
        x = x.pin_memory().to("cuda", non_blocking=True)
        loss = net(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss
    return step, 20


def sync_bound(torch):
    a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16) / 90.5
    host = torch.randn(64, 4096)

    def step():
        x = a
        for _ in range(6):
            x = x @ b
        x.float().abs().mean().item()  # the read-back: the host waits for the GPU
        cpu_work(0.008, host)  # then prepares the next batch while the GPU waits
        return x
    return step, 10


def launch_bound(torch):
    x = torch.zeros(1024, device="cuda")

    def step():
        for _ in range(2000):
            x.add_(1.0)
        return x
    return step, 2000


def cnn_readback(torch):
    import torchvision
    net = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=1e-2, momentum=0.9)
    x = torch.randn(128, 3, 64, 64, device="cuda")
    y = torch.randint(0, 10, (128,), device="cuda")
    n = [0]

    def step():
        loss = torch.nn.functional.cross_entropy(net(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        n[0] += 1
        print(f"step {n[0]} loss {loss:.4f}", flush=True)  # the read-back a step (Tensor.__format__ calls .item())
        return loss
    return step, 500


LOOPS = [("gpu-bound", gpu_bound, "8 chained 8192^3 bf16 matmuls a step, no host work"),
         ("input-bound", input_bound, "15 ms CPU batch preparation, pinned copy, an MLP step (4096 wide, batch 512)"),
         ("sync-bound", sync_bound, "6 chained matmuls, .item(), then 8 ms CPU preparation"),
         ("launch-bound", launch_bound, "2000 tiny add_ kernels a step"),
         ("cnn-readback", cnn_readback, "torchvision ResNet-18, random 64x64 images, batch 128, f-string of the loss each step")]
DEFAULT = ("gpu-bound", "input-bound", "sync-bound", "launch-bound")


def union_within(intervals, lo, hi):
    """Length of the union of [start, end) intervals, clipped to [lo, hi)."""
    total, cur_s, cur_e = 0.0, None, None
    for s, e in sorted((max(s, lo), min(e, hi)) for s, e in intervals):
        if e <= s:
            continue
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def busy_share(trace_path):
    """(window µs, busy µs, device events in the window, categories seen) of an exported trace."""
    with open(trace_path, encoding="utf-8") as f:
        events = json.load(f).get("traceEvents", [])
    windows = [e for e in events if e.get("name") == WINDOW and e.get("ph") == "X" and e.get("cat") != "gpu_user_annotation"]
    if not windows:
        raise RuntimeError(f"no '{WINDOW}' range in the trace")
    lo = float(windows[0]["ts"])
    hi = lo + float(windows[0]["dur"])
    cats = {}
    device = []
    for e in events:
        cat = e.get("cat", "")
        cats[cat] = cats.get(cat, 0) + 1
        if cat in DEVICE_CATEGORIES and e.get("ph") == "X":
            s = float(e["ts"])
            device.append((s, s + float(e.get("dur", 0))))
    inside = sum(1 for s, e in device if e > lo and s < hi)
    if not device:
        raise RuntimeError(f"no kernel/memcpy/memset activity in the trace (categories: {sorted(cats)})")
    return hi - lo, union_within(device, lo, hi), inside, cats


def measure(torch, name, build, seconds, profiled=True):
    step, kernels = build(torch)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < (seconds / 2 if profiled else seconds) or n < 3:
        step()
        n += 1
    torch.cuda.synchronize()
    plain_ms = (time.perf_counter() - t0) * 1000 / n
    if not profiled:  # --no-profile: the loop alone, for a sampler outside the process to measure
        return dict(loop=name, steps=n, step_ms_plain=round(plain_ms, 2))
    k = max(5, min(int(seconds * 1000 / plain_ms), MAX_DEVICE_EVENTS // kernels))
    from torch.profiler import ProfilerActivity, profile, record_function
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.json")
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(3):  # CUPTI's own start-up stays out of the window
                step()
            torch.cuda.synchronize()
            with record_function(WINDOW):
                for _ in range(k):
                    step()
                torch.cuda.synchronize()
        prof.export_chrome_trace(trace)
        window_us, busy_us, inside, cats = busy_share(trace)
    return dict(loop=name, steps=k, step_ms_plain=round(plain_ms, 2), step_ms_profiled=round(window_us / 1000 / k, 2),
                window_ms=round(window_us / 1000, 1), busy_pct=round(100 * busy_us / window_us, 1),
                idle_pct=round(100 - 100 * busy_us / window_us, 1), device_events=inside,
                categories={c: n for c, n in cats.items() if c in DEVICE_CATEGORIES})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the numbers here")
    ap.add_argument("--seconds", type=float, default=2.0, help="timed and profiled span of each loop (default 2)")
    ap.add_argument("--only", default="", help="comma-separated loop names")
    ap.add_argument("--no-profile", action="store_true",
                    help="run each loop for --seconds without torch.profiler (step times only)")
    a = ap.parse_args()
    torch = need_torch_cuda()
    rows = []
    for name, build, what in LOOPS:
        if (a.only and name not in a.only.split(",")) or (not a.only and name not in DEFAULT):
            continue
        t0 = time.monotonic()
        try:
            row = measure(torch, name, build, a.seconds, profiled=not a.no_profile)
        except Exception as e:  # one loop's failure is a row, not the end of the table
            row = dict(loop=name, error=f"{type(e).__name__}: {e}"[:300])
        row.update(what=what, seconds=round(time.monotonic() - t0, 1))
        rows.append(row)
        print(f"idle_loops: {name}: {row.get('error') or '%s%% idle' % row.get('idle_pct', '-')} ({row['seconds']} s)",
              flush=True)
        torch.cuda.empty_cache()
    print()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}; GPU busy = union of CUPTI kernel, memcpy "
          "and memset intervals inside the window; idle = the rest")
    print()
    print("| loop | what it does | step ms (no profiler) | step ms (profiled) | steps in window | window ms | "
          "device activities | GPU busy % | GPU idle % |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if "error" in r:
            print(f"| {r['loop']} | {r['what']} | ERROR: {r['error']} | | | | | | |")
        else:
            print(f"| {r['loop']} | {r['what']} | {r['step_ms_plain']} | {r.get('step_ms_profiled', '-')} | {r['steps']} | "
                  f"{r.get('window_ms', '-')} | {r.get('device_events', '-')} | {r.get('busy_pct', '-')} | {r.get('idle_pct', '-')} |")
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(dict(torch=torch.__version__, device=torch.cuda.get_device_name(0), rows=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
