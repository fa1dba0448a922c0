"""lightning_fit.py: PyTorch Lightning's Trainer.fit on an MLP, bf16-mixed, one GPU.

Clean: a LightningModule, AdamW, a DataLoader with pin_memory=True (Lightning moves
each batch with non_blocking copies), no logging, progress bar or checkpoints.
Planted: the module's on_train_batch_end calls torch.cuda.empty_cache() every step, as a
"keep memory low" habit (expected: alloc.churn-after-warmup at the line marked PLANTED).
"""
import tempfile
import warnings

from harness import done, need, need_torch_cuda, parse

args = parse(__doc__.splitlines()[0], steps=40)
torch = need_torch_cuda()
L = need("lightning")
warnings.filterwarnings("ignore", message=".*does not have many workers.*")
warnings.filterwarnings("ignore", message=".*GPU available.*")

BATCH, FEATURES, CLASSES = 256, 1024, 10


class Classifier(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(
            torch.nn.Linear(FEATURES, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096), torch.nn.GELU(),
            torch.nn.Linear(4096, CLASSES))
        self.running = None

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        d = loss.detach()
        self.running = d if self.running is None else self.running + d
        return loss

    def on_train_batch_end(self, outputs, batch, batch_idx):
        if args.planted:
            torch.cuda.empty_cache()  # PLANTED

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


g = torch.Generator().manual_seed(0)
data = torch.utils.data.TensorDataset(torch.randn(args.steps * BATCH, FEATURES, generator=g),
                                      torch.randint(0, CLASSES, (args.steps * BATCH,), generator=g))
loader = torch.utils.data.DataLoader(data, batch_size=BATCH, shuffle=True, pin_memory=True, drop_last=True)
model = Classifier()
with tempfile.TemporaryDirectory() as root:
    trainer = L.Trainer(accelerator="gpu", devices=1, max_steps=args.steps, precision="bf16-mixed", logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
                        num_sanity_val_steps=0, limit_val_batches=0, default_root_dir=root)
    trainer.fit(model, loader)
done("lightning_fit", args, lightning=L.__version__, steps=trainer.global_step,
     mean_loss=round(float(model.running) / max(trainer.global_step, 1), 4))
