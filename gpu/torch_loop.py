#!/usr/bin/env python3
"""torch_loop.py: a small PyTorch training loop on CUDA for the GPU-host proof.

Run under the shim by gpu/run_gpu.sh. It trains an MLP on random data with AdamW in
two phases (batch 256, then torch.cuda.empty_cache(), then batch 1024, so that the
caching allocator both frees segments and makes new ones), synchronizes, and prints
ONE JSON line with torch.cuda.memory_stats() as the allocator saw it:
  segment.all.allocated / .freed / .current / .peak   (one segment = one cudaMalloc)
  reserved_bytes.all.allocated / .freed / .current / .peak
gpu/check_gpu_report.py compares them with the shim's report (api.cudaMalloc.calls,
memory.devices[0].kinds.device allocs / frees / live_bytes / peak_bytes).
Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:False (run_gpu.sh does) so that
segments are cudaMalloc'd, not mapped with cuMemCreate/cuMemMap.
"""
import json
import os
import sys
import time

import torch


def train(model, opt, steps, batch, dev):
    loss = None
    for _ in range(steps):
        x = torch.randn(batch, 1024, device=dev)
        y = torch.randint(0, 10, (batch,), device=dev)
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    return float(loss.item())


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if not torch.cuda.is_available():
        print("torch.cuda.is_available() is False", file=sys.stderr)
        return 1
    t0 = time.monotonic()
    torch.manual_seed(0)
    dev = torch.device("cuda", 0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 2048), torch.nn.GELU(), torch.nn.LayerNorm(2048),
        torch.nn.Linear(2048, 2048), torch.nn.GELU(),
        torch.nn.Linear(2048, 10)).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss1 = train(model, opt, steps, 256, dev)
    torch.cuda.synchronize()
    torch.cuda.empty_cache()  # returns unused segments: cudaFree
    loss2 = train(model, opt, steps, 1024, dev)
    torch.cuda.synchronize()
    s = torch.cuda.memory_stats(0)
    keys = ["segment.all.allocated", "segment.all.freed", "segment.all.current", "segment.all.peak",
            "reserved_bytes.all.allocated", "reserved_bytes.all.freed", "reserved_bytes.all.current",
            "reserved_bytes.all.peak", "allocated_bytes.all.peak", "num_alloc_retries", "num_ooms",
            "num_device_alloc", "num_device_free"]
    out = {
        "program": "torch_loop",
        "pid": os.getpid(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "device": torch.cuda.get_device_name(0),
        "allocator_backend": torch.cuda.get_allocator_backend(),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        "steps": 2 * steps,
        "loss": [loss1, loss2],
        "seconds": round(time.monotonic() - t0, 3),
        "memory_stats": {k: s[k] for k in keys if k in s},
    }
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
