# An event recorded and waited on by the host every step.
import torch
from common import STEPS, batch, start, step
start()
ev = torch.cuda.Event()
for _ in range(STEPS):
    step(*batch())
    ev.record()
    ev.synchronize()  # the pattern
print("done")
