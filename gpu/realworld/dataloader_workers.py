"""dataloader_workers.py: a torchvision ResNet-18 fed by a DataLoader with 4 forked workers.

Clean: the workers make each image on the CPU (random crop, flip, normalize), the loader
pins the batches (pin_memory=True), the loop copies them with non_blocking=True.
Planted: the loader is built with pin_memory=False, so the same non_blocking copies read
pageable memory and run synchronously (expected: copy.async-from-pageable at the copy
line, marked PLANTED; the cause is the pin_memory argument of the DataLoader).
"""
from harness import done, need, need_torch_cuda, parse

args = parse(__doc__.splitlines()[0], steps=40)
torch = need_torch_cuda()
torchvision = need("torchvision")

BATCH, SIZE, CLASSES, WORKERS = 128, 64, 10, 4


class Augmented(torch.utils.data.Dataset):
    """Images made and augmented on the CPU, in the workers, as an image pipeline does."""

    def __len__(self):
        return args.steps * BATCH

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        img = torch.rand(3, SIZE + 8, SIZE + 8, generator=g)
        dy, dx = (int(v) for v in torch.randint(0, 9, (2,), generator=g))
        img = img[:, dy:dy + SIZE, dx:dx + SIZE]
        if i % 2:
            img = img.flip(2)
        return (img - 0.5) / 0.25, i % CLASSES


loader = torch.utils.data.DataLoader(Augmented(), batch_size=BATCH, shuffle=True, num_workers=WORKERS,
                                     pin_memory=not args.planted, drop_last=True, prefetch_factor=2)
model = torchvision.models.resnet18(num_classes=CLASSES).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
total = torch.zeros((), device="cuda")
steps = 0
for x, y in loader:
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)  # PLANTED
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    total += loss.detach()
    steps += 1
done("dataloader_workers", args, workers=WORKERS, pinned=not args.planted, steps=steps,
     mean_loss=round(total.item() / max(steps, 1), 4))
