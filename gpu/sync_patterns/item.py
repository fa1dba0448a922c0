# .item() every step: a 4-byte device-to-host read-back and a stream sync.
from common import STEPS, batch, start, step
start()
total = 0.0
for _ in range(STEPS):
    loss = step(*batch())
    total += loss.item()  # the pattern
print("done", total)
