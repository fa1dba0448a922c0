# ddp_train.py: a small DDP training loop over NCCL, one process per GPU (torchrun).
# Prints one JSON line per rank: its device, what torch.cuda.mem_get_info reports
# (capped by CUDASHIM_MEM_CAP), and the NCCL version torch uses.
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
print(json.dumps({"rank": rank, "device": local, "mem_get_info_total_gib": total / 2**30,
                  "nccl": ".".join(map(str, torch.cuda.nccl.version()))}), flush=True)
dist.destroy_process_group()
