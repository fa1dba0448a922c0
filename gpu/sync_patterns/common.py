"""common.py: the small training step every sync-pattern script shares.

A loop that overlaps CPU batch preparation with GPU work: a 2-layer MLP on random
data. Each pattern script adds exactly one habit to it; clean.py does the same work
the right way. SYNC_DEBUG=1 turns on torch.cuda.set_sync_debug_mode("warn") to
compare PyTorch's own detector on the same scripts.
"""
import os

import torch

STEPS = int(os.environ.get("STEPS", "60"))
torch.manual_seed(0)
dev = "cuda"
model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).to(dev)
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x_pinned = torch.randn(256, 512).pin_memory()
y_pinned = torch.randint(0, 10, (256,)).pin_memory()
x_pageable = torch.randn(256, 512)


def step(x, y):
    opt.zero_grad(set_to_none=True)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def batch():
    return x_pinned.to(dev, non_blocking=True), y_pinned.to(dev, non_blocking=True)


def start():
    if os.environ.get("SYNC_DEBUG") == "1":
        torch.cuda.set_sync_debug_mode("warn")
