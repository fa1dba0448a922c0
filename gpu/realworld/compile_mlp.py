"""compile_mlp.py: torch.compile (Inductor, Triton kernels) of an MLP, trained in bf16 autocast.

Clean: the compiled model, a per-sample loss with an extra weight on the misclassified
samples computed with a mask product (no host round trip), data resident on the GPU.
Planted: the misclassified samples are picked with nonzero() every step, a boolean-mask
habit whose result size the host must read (expected: sync.scalar-readback at the line
marked PLANTED).
"""
from harness import done, need_torch_cuda, parse

args = parse(__doc__.splitlines()[0], steps=40)
torch = need_torch_cuda()
F = torch.nn.functional

BATCH, FEATURES, CLASSES, BATCHES = 512, 1024, 16, 8
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(FEATURES, 4096), torch.nn.LayerNorm(4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096),
    torch.nn.GELU(), torch.nn.Linear(4096, CLASSES)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model)
xs = torch.randn(BATCHES, BATCH, FEATURES, device="cuda")
ys = torch.randint(0, CLASSES, (BATCHES, BATCH), device="cuda")
total = torch.zeros((), device="cuda")
for step in range(args.steps):
    x, y = xs[step % BATCHES], ys[step % BATCHES]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = compiled(x)
    per_sample = F.cross_entropy(logits.float(), y, reduction="none")
    wrong = logits.argmax(1) != y
    if args.planted:
        hard = wrong.nonzero().squeeze(1)  # PLANTED
        extra = per_sample[hard].sum()
    else:
        extra = (per_sample * wrong).sum()
    loss = per_sample.mean() + 0.1 * extra / BATCH
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    total += loss.detach()
done("compile_mlp", args, torch=torch.__version__, mean_loss=round(total.item() / args.steps, 4))
