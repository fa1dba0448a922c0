# torch.cuda.synchronize() every step (PyTorch's sync debug mode does not see it).
import torch
from common import STEPS, batch, start, step
start()
for _ in range(STEPS):
    step(*batch())
    torch.cuda.synchronize()  # the pattern
print("done")
