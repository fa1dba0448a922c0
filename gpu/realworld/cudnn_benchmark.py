"""cudnn_benchmark.py: multi-scale ResNet-18 training with torch.backends.cudnn.benchmark = True.

Clean: the image size changes every 20 steps (64, 96, 128 px, twice round), so cuDNN autotunes
the convolutions at each new size the first time it sees it: bursts of timed trials, syncs and
workspace allocations inside cuDNN, reached from the model's forward and backward, at steps 0,
20 and 40 and never again. Those bursts are warm-up, not a loop habit: no warning. The loss is
summed on the GPU and read once at the end.
Planted: `loss.item()` every step (expected: sync.scalar-readback at the line marked PLANTED),
which must still be found beside the bursts.
"""
from harness import done, need, need_torch_cuda, parse

args = parse(__doc__.splitlines()[0], steps=120)
torch = need_torch_cuda()
torchvision = need("torchvision")
torch.backends.cudnn.benchmark = True
torch.manual_seed(0)

BATCH, CLASSES, SIZES, EVERY = 64, 10, (64, 96, 128), 20
model = torchvision.models.resnet18(num_classes=CLASSES).cuda().to(memory_format=torch.channels_last)
opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
batches = {s: (torch.randn(BATCH, 3, s, s, device="cuda").to(memory_format=torch.channels_last),
               torch.randint(0, CLASSES, (BATCH,), device="cuda")) for s in SIZES}
total = torch.zeros((), device="cuda")
seen = []
for i in range(args.steps):
    size = SIZES[(i // EVERY) % len(SIZES)]
    x, y = batches[size]
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    total += loss.detach()
    if args.planted:
        seen.append(loss.item())  # PLANTED
done("cudnn_benchmark", args, sizes=list(SIZES), steps=args.steps, mean_loss=round(total.item() / max(args.steps, 1), 4))
