# `if tensor:` on a GPU tensor: bool() reads it back.
from common import STEPS, batch, start, step
start()
skipped = 0
for _ in range(STEPS):
    loss = step(*batch())
    if loss > 100:  # the pattern
        skipped += 1
print("done", skipped)
