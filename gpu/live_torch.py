"""live_torch.py: a small PyTorch job that touches the CUDA libraries a real one does
(cuBLAS, cuDNN, the CUDA runtime's fatbins) and compiles one kernel at run time
through Triton (torch.compile), for the live inventory and module-load checks
(gpu/run_live.sh). Prints one JSON line with what it did."""
import json
import time

import torch
import torch.nn as nn

dev = "cuda"
model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 32 * 32, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 3, 32, 32, device=dev)
y = torch.randint(0, 10, (32,), device=dev)
for _ in range(5):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
torch.cuda.synchronize()


@torch.compile(backend="inductor")
def fused(a, b):
    return torch.sin(a) * torch.cos(b) + a * b


t0 = time.perf_counter()
a = torch.randn(1 << 20, device=dev)
out = fused(a, a)
torch.cuda.synchronize()
compile_s = time.perf_counter() - t0
import triton  # noqa: E402  (after the compile: the version it used)

print(json.dumps({"loss": float(loss), "compile_s": round(compile_s, 3), "triton": triton.__version__,
                  "torch": torch.__version__, "out_sum": float(out.sum())}))
