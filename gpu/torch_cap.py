# torch_cap.py: PyTorch under a cudashim memory cap (CUDASHIM_MEM_CAP=8GiB): what
# torch.cuda.mem_get_info() says, and how far 1 GiB tensors get before
# torch.OutOfMemoryError. Prints one JSON line.
import json
import os

import torch

free, total = torch.cuda.mem_get_info()
tensors, oom, err = [], False, ""
try:
    for _ in range(16):
        tensors.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
except torch.OutOfMemoryError as e:  # raised only after torch freed its cache and retried
    oom, err = True, str(e).splitlines()[0][:300]
print(json.dumps({"mem_get_info_free": free, "mem_get_info_total": total, "tensors": len(tensors), "oom": oom,
                  "allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(),
                  "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "error": err}))
