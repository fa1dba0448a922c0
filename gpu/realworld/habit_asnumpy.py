"""habit_asnumpy.py: cupy.asnumpy(loss) every step

Clean: the loss summed on the GPU, read once at the end
Planted: `cupy.asnumpy(loss)` every step (expected: sync.scalar-readback (one finding; also copy.async-from-pageable) at the line marked PLANTED).
Both: a step of GPU work (six chained 4096x4096 bf16 matmuls, about 2 ms on the H200), then
1 ms of the host's own work (harness.host_work); `--alternate R` is the price benchmark's form
(price_bench.py: fixed and planted blocks in turn, timed).
"""
from harness import BlockClock, alternate_arg, done, host_work, need, no_cuda, parse

args = parse(__doc__.splitlines()[0], steps=100, extra=alternate_arg)
cp = need("cupy")
try:
    cp.cuda.runtime.getDeviceCount()
except Exception as e:  # cupy's CUDARuntimeError: no driver or no device
    no_cuda(f"cupy {cp.__version__} sees no CUDA device ({e})")
rng = cp.random.default_rng(0)
w = rng.standard_normal((4096, 4096), dtype=cp.float32) / 64
x0 = rng.standard_normal((4096, 4096), dtype=cp.float32)
total = cp.zeros((), dtype=cp.float32)
last = None


def step(planted):
    global last
    x = x0
    for _ in range(2):
        x = cp.tanh(x @ w)
    loss = (x * x).mean()
    if planted:
        last = cp.asnumpy(loss)  # PLANTED
    total[...] += loss
    host_work(1.0)


clock = BlockClock("habit_asnumpy", args)
for planted, steps in clock.blocks():
    for _ in range(steps):
        step(planted)
    cp.cuda.Device().synchronize()  # a block's end: one visit a block, not in the loop
clock.write()
done("habit_asnumpy", args, mean_loss=round(float(total) / max(1, args.steps), 4))
