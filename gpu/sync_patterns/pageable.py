# non_blocking=True from pageable memory: the copy runs synchronously.
import torch
from common import STEPS, start, step, x_pageable, y_pinned
start()
for _ in range(STEPS):
    x = x_pageable.to("cuda", non_blocking=True)  # the pattern
    step(x, y_pinned.to("cuda", non_blocking=True))
print("done")
