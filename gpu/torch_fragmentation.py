# torch_fragmentation.py MODE: real PyTorch allocator states for the report's torch_memory
# section (gpu/run_torch_memory.sh runs it under the shim; gpu/check_torch_memory.py judges).
#   frag  1200 tensors of 20 MiB freed, then 1200 of 12 MiB. torch's allocator gives a tensor of
#         10 MiB or more a segment of its size rounded up to 2 MiB, and serves a later request
#         from a larger cached block by splitting it: each 12 MiB tensor splits one 20 MiB
#         segment, and the 8 MiB left fits no later 12 MiB request. 40% of what torch reserves
#         is then free but unusable, and torch.cuda.empty_cache() cannot return it
#         (inactive_split_bytes). A matmul brings cuBLAS in first.
#   oom   the same with 250 tensors each, under a cap (CUDASHIM_MEM_CAP=8GiB): then tensors of
#         1 GiB until torch raises torch.OutOfMemoryError, which the script catches and goes on.
#         With expandable_segments:True the 12 MiB tensors pack into one mapped range and the
#         free space is one range torch can unmap.
# (A first version used 21 and 11 MiB: 22 MiB segments hold two 11 MiB tensors each, a plain
# cache and no fragmentation; gpu/results/2026-11-30-h200-run1.)
#   two   (two GPUs) 1 GiB on cuda:0, and on cuda:1 the frag pattern with 200 tensors each: one
#         row per device, each against the ledger of that device.
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


def stats(device=0):
    s = torch.cuda.memory_stats(device)
    return {k: s.get(k, 0) for k in KEYS}


mode = sys.argv[1]
if mode == "two":
    keep0 = torch.empty(1 << 30, dtype=torch.uint8, device="cuda:0")
    torch.cuda.set_device(1)
a = torch.randn(1024, 1024, device="cuda")
(a @ a).sum().item()  # cuBLAS handle and workspace
n = {"oom": 250, "two": 200}.get(mode, 1200)
big = [torch.empty(20 * MiB, dtype=torch.uint8, device="cuda") for _ in range(n)]
del big
small = [torch.empty(12 * MiB, dtype=torch.uint8, device="cuda") for _ in range(n)]
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
out["at_end_by_device"] = {d: stats(d) for d in range(torch.cuda.device_count())}
print(json.dumps(out), flush=True)
