# ddp_train.py: a small DDP training loop over NCCL, one process per GPU (torchrun).
# Prints one JSON line per rank: its device, what torch.cuda.mem_get_info reports
# (capped by CUDASHIM_MEM_CAP), where torch ran out of memory under that cap when it
# allocated 1 GiB tensors until it failed, and the NCCL version torch uses.
import json
import os

import torch
import torch.distributed as dist

dist.init_process_group("nccl")
rank, local = dist.get_rank(), int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(1024, 1024).cuda(), device_ids=[local])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(30):
    opt.zero_grad(set_to_none=True)
    model(torch.randn(64, 1024, device="cuda")).square().mean().backward()
    opt.step()
torch.cuda.synchronize()
free, total = torch.cuda.mem_get_info()
# The per-rank cap, driven to its limit: 1 GiB tensors until torch raises OutOfMemoryError.
held, oom = [], None
try:
    for _ in range(200):
        held.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError:
    oom = torch.cuda.memory_reserved() / 2**30
held.clear()
torch.cuda.empty_cache()
print(json.dumps({"rank": rank, "device": local, "mem_get_info_total_gib": total / 2**30,
                  "oom_at_reserved_gib": oom, "nccl": ".".join(map(str, torch.cuda.nccl.version()))}), flush=True)
dist.barrier()
dist.destroy_process_group()
