# gpu_train_step.py MODEL STEPS: one training process for bench/gpu_overhead.py.
# A training loop of tens of milliseconds per step, with the CPU preparing the next
# batch while the GPU works and the loss logged every 10 steps (one .item()).
# Prints one JSON line: the median and mean step time of the measured steps.
import json
import os
import statistics
import sys
import time

import torch

model_name, steps = sys.argv[1], int(sys.argv[2])
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
times = []
for step in range(steps + 20):
    t0 = time.perf_counter()
    x, y = cpu_batches[step % 4]
    x, y = x.to(dev, non_blocking=True), y.to(dev, non_blocking=True)
    opt.zero_grad(set_to_none=True)
    loss = loss_of(model(x), y)
    loss.backward()
    opt.step()
    if step % 10 == 0:
        _ = loss.item()
    torch.cuda.synchronize()  # per-step timing only; the same in every configuration
    if step >= 20:
        times.append(time.perf_counter() - t0)
print(json.dumps({"model": model_name, "median_ms": statistics.median(times) * 1e3, "mean_ms": statistics.mean(times) * 1e3,
                  "steps": len(times)}))
