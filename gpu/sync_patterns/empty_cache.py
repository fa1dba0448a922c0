# torch.cuda.empty_cache() every step: the cache is flushed (cudaFree synchronizes
# the device) and re-filled by cudaMalloc on the next step.
import torch
from common import STEPS, batch, start, step
start()
for _ in range(STEPS):
    step(*batch())
    torch.cuda.empty_cache()  # the pattern
print("done")
