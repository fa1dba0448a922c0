"""habit_empty_cache.py: torch.cuda.empty_cache() every step

Clean: the caching allocator keeps its blocks
Planted: `torch.cuda.empty_cache()` every step (expected: alloc.churn-after-warmup at the line marked PLANTED).
Both: a step of GPU work (six chained 4096x4096 bf16 matmuls, about 2 ms on the H200), then
1 ms of the host's own work (harness.host_work); `--alternate R` is the price benchmark's form
(price_bench.py: fixed and planted blocks in turn, timed).
"""
from harness import BlockClock, alternate_arg, done, host_work, need_torch_cuda, parse

args = parse(__doc__.splitlines()[0], steps=100, extra=alternate_arg)
torch = need_torch_cuda()
torch.manual_seed(0)
w = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16) / 64
x0 = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
total = torch.zeros((), device="cuda")


def step(planted):
    x = x0
    for _ in range(6):
        x = torch.tanh(x @ w)
    loss = x.float().pow(2).mean()
    if planted:
        torch.cuda.empty_cache()  # PLANTED
    total.add_(loss.detach())
    host_work(1.0)


clock = BlockClock("habit_empty_cache", args)
for planted, steps in clock.blocks():
    for _ in range(steps):
        step(planted)
    torch.cuda.synchronize()  # a block's end: one visit a block, not in the loop
clock.write()
done("habit_empty_cache", args, mean_loss=round(total.item() / max(1, args.steps), 4))
