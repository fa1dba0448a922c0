# .cpu() of a small tensor every step.
from common import STEPS, batch, start, step, model
start()
for _ in range(STEPS):
    loss = step(*batch())
    norm = model[0].weight.grad.norm().cpu()  # the pattern
print("done", float(norm))
