"""screen_job.py [--steps N]: a small, clean torch training job for the summary a person reads
(issue 33 item 5; gpu/realworld/screen.py runs it under `cudashim run` through `bash -c`).
A torchvision ResNet-18 on random 64x64 images, batch 64, SGD, 100 steps, fed by a DataLoader
with num_workers=2 (worker processes that make no CUDA call), pinned batches copied with
non_blocking=True, the loss read back once at the end.
"""
import argparse

import torch
import torchvision

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--steps", type=int, default=100)
args = ap.parse_args()
BATCH, SIZE, CLASSES = 64, 64, 10


class RandomImages(torch.utils.data.Dataset):
    def __len__(self):
        return args.steps * BATCH

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, SIZE, SIZE, generator=g), i % CLASSES


loader = torch.utils.data.DataLoader(RandomImages(), batch_size=BATCH, num_workers=2, pin_memory=True, drop_last=True)
model = torchvision.models.resnet18(num_classes=CLASSES).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
total = torch.zeros((), device="cuda")
steps = 0
for x, y in loader:
    x, y = x.to("cuda", non_blocking=True), y.to("cuda", non_blocking=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    total += loss.detach()
    steps += 1
print(f"screen_job: {steps} steps, mean loss {total.item() / max(steps, 1):.4f}")
