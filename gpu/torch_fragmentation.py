# torch_fragmentation.py MODE: real PyTorch allocator states for the report's torch_memory
# section (gpu/run_torch_memory.sh runs it under the shim; gpu/check_torch_memory.py judges).
#   frag  1200 tensors of 21 MiB freed, then 1200 of 11 MiB: each 11 MiB tensor splits one cached
#         21 MiB segment, and the 10 MiB left in it fits no later 11 MiB request, so nearly half
#         of what torch reserves stays free but unusable (inactive_split_bytes). A matmul brings
#         cuBLAS in first.
#   oom   the same with 200 tensors each, under a cap (CUDASHIM_MEM_CAP=8GiB): then tensors of
#         1 GiB until torch raises torch.OutOfMemoryError, which the script catches and goes on.
#         With expandable_segments:True the free space is one range torch can unmap.
# Prints one JSON line, the last thing it does before exit: torch.cuda.memory_stats() of device 0
# as the script saw it (after the OOM, and at the end), for the checker to compare with what the
# shim read by itself.
import json
import sys

import torch

KEYS = ("allocated_bytes.all.current", "allocated_bytes.all.peak", "reserved_bytes.all.current",
        "reserved_bytes.all.peak", "inactive_split_bytes.all.current", "segment.all.current", "num_alloc_retries",
        "num_ooms")
MiB = 1 << 20


def stats():
    s = torch.cuda.memory_stats(0)
    return {k: s.get(k, 0) for k in KEYS}


mode = sys.argv[1]
a = torch.randn(1024, 1024, device="cuda")
(a @ a).sum().item()  # cuBLAS handle and workspace
n = 200 if mode == "oom" else 1200
big = [torch.empty(21 * MiB, dtype=torch.uint8, device="cuda") for _ in range(n)]
del big
small = [torch.empty(11 * MiB, dtype=torch.uint8, device="cuda") for _ in range(n)]
out = {"mode": mode}
if mode == "oom":
    held = []
    try:
        for _ in range(200):
            held.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError as e:
        out["oom_after_gib_tensors"] = len(held)
        out["oom_message"] = str(e).splitlines()[0][:400]
    out["after_oom"] = stats()
    del held
torch.cuda.synchronize()
out["at_end"] = stats()
print(json.dumps(out), flush=True)
