# gpu_train_step.py MODEL STEPS: one training process for bench/gpu_overhead.py.
# A training loop of tens of milliseconds per step, with the CPU preparing the next
# batch while the GPU works and the loss logged every 10 steps (one .item()).
# Prints one JSON line: the median and mean step time of the measured steps.
# WARMUP (default 20) steps come first and are not measured. With SYNC_DEBUG_AB=N, N more
# pairs of 25-step blocks follow, alternating set_sync_debug_mode(0) and ("warn") in this
# same process, and the line also gives each mode's median step time over its blocks:
# PyTorch's own detector measured side by side with no change of process. SITES_AB=N does
# the same under cudashim with its call sites (the sync analysis) off and on, through its
# C API cudashim_set_call_sites: what the analysis costs, free of process-to-process noise.
import json
import os
import statistics
import sys
import time

import torch

model_name, steps = sys.argv[1], int(sys.argv[2])
warmup = int(os.environ.get("WARMUP", "20"))
ab_pairs = int(os.environ.get("SYNC_DEBUG_AB", "0"))
sites_pairs = int(os.environ.get("SITES_AB", "0"))
torch.manual_seed(0)
torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True
if os.environ.get("SYNC_DEBUG") == "1":
    import warnings
    warnings.simplefilter("ignore")  # count the detector's cost, not the printing
    torch.cuda.set_sync_debug_mode("warn")
dev = "cuda"
if model_name == "transformer":
    layer = torch.nn.TransformerEncoderLayer(d_model=512, nhead=8, dim_feedforward=2048, batch_first=True)
    model = torch.nn.Sequential(torch.nn.TransformerEncoder(layer, num_layers=6), torch.nn.Linear(512, 1000)).to(dev)
    make = lambda: (torch.randn(48, 256, 512).pin_memory(), torch.randint(0, 1000, (48 * 256,)).pin_memory())
    loss_of = lambda out, y: torch.nn.functional.cross_entropy(out.reshape(-1, 1000), y)
else:
    import torchvision
    model = torchvision.models.resnet18(num_classes=100).to(dev)
    make = lambda: (torch.randn(96, 3, 160, 160).pin_memory(), torch.randint(0, 100, (96,)).pin_memory())
    loss_of = torch.nn.functional.cross_entropy
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
cpu_batches = [make() for _ in range(4)]


def step(i):
    t0 = time.perf_counter()
    x, y = cpu_batches[i % 4]
    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = loss_of(model(x), y)
    loss.backward()
    opt.step()
    if i % 10 == 0:
        _ = loss.item()
    torch.cuda.synchronize()  # per-step timing only; the same in every configuration
    return time.perf_counter() - t0


times = [step(i) for i in range(steps + warmup)][warmup:]
out = {"model": model_name, "median_ms": statistics.median(times) * 1e3, "mean_ms": statistics.mean(times) * 1e3,
       "steps": len(times), "warmup": warmup}
if ab_pairs:
    import warnings
    warnings.simplefilter("ignore")  # count the detector's cost, not the printing
    by_mode = {0: [], 1: []}
    i = steps + warmup
    for pair in range(ab_pairs):
        for mode in ((0, 1) if pair % 2 == 0 else (1, 0)):
            torch.cuda.set_sync_debug_mode("warn" if mode else 0)
            by_mode[mode] += [step(i + k) for k in range(25)]
            i += 25
    torch.cuda.set_sync_debug_mode(0)
    out["sync_debug_off_ms"] = statistics.median(by_mode[0]) * 1e3
    out["sync_debug_warn_ms"] = statistics.median(by_mode[1]) * 1e3
i = i if ab_pairs else steps + warmup
if sites_pairs:
    import ctypes
    set_sites = ctypes.CDLL(None).cudashim_set_call_sites  # AttributeError without the shim: a clear failure
    set_sites.argtypes, set_sites.restype = [ctypes.c_int], ctypes.c_int
    by_mode = {0: [], 1: []}
    for pair in range(sites_pairs):
        for mode in ((1, 0) if pair % 2 == 0 else (0, 1)):
            set_sites(mode)
            by_mode[mode] += [step(i + k) for k in range(25)]
            i += 25
    set_sites(-1)
    out["sites_off_ms"] = statistics.median(by_mode[0]) * 1e3
    out["sites_on_ms"] = statistics.median(by_mode[1]) * 1e3
out["total_steps"] = i
print(json.dumps(out))
