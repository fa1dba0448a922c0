"""hf_trainer.py: Hugging Face transformers' Trainer on a small Llama built from a config.

Clean: the Trainer with its defaults (AdamW, the DataLoader it builds, pinned memory),
bf16, synthetic token batches; the user's compute_loss keeps its running loss on the GPU.
Planted: that compute_loss reads the loss with .item() every step, as a logging habit
(expected: sync.scalar-readback at the line marked PLANTED).
"""
import dataclasses
import os
import tempfile

from harness import done, need, need_torch_cuda, parse

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no network on the GPU host; the model comes from a config
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

args = parse(__doc__.splitlines()[0], steps=40)
torch = need_torch_cuda()
transformers = need("transformers")
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments  # noqa: E402

SEQ, BATCH, VOCAB = 256, 16, 8192


class Tokens(torch.utils.data.Dataset):
    """Random token ids, made once on the CPU: the data does not matter here, its path does."""

    def __init__(self, n):
        self.ids = torch.randint(0, VOCAB, (n, SEQ), generator=torch.Generator().manual_seed(0))

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


class CorpusTrainer(Trainer):
    """The Trainer with a user's compute_loss that keeps a running loss for its own logging."""

    running = None
    steps_seen = 0

    def compute_loss(self, model, inputs, *rest, **kw):
        out = super().compute_loss(model, inputs, *rest, **kw)
        loss = (out[0] if isinstance(out, tuple) else out).detach()
        self.steps_seen += 1
        if args.planted:
            self.running = (self.running or 0.0) + loss.item()  # PLANTED
        else:
            self.running = loss if self.running is None else self.running + loss
        return out


def training_arguments(out_dir):
    """TrainingArguments with the settings this run needs, keeping only those this version has."""
    wanted = dict(output_dir=out_dir, max_steps=args.steps, per_device_train_batch_size=BATCH, learning_rate=3e-4,
                  bf16=True, logging_strategy="no", save_strategy="no", report_to="none", disable_tqdm=True, seed=0)
    known = {f.name for f in dataclasses.fields(TrainingArguments)}
    return TrainingArguments(**{k: v for k, v in wanted.items() if k in known})


config = LlamaConfig(vocab_size=VOCAB, hidden_size=512, intermediate_size=1376, num_hidden_layers=4,
                     num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=SEQ)
with tempfile.TemporaryDirectory() as out_dir:
    trainer = CorpusTrainer(model=LlamaForCausalLM(config), args=training_arguments(out_dir),
                            train_dataset=Tokens(args.steps * BATCH))
    result = trainer.train()
running = trainer.running if args.planted else float(trainer.running)
done("hf_trainer", args, transformers=transformers.__version__, steps_seen=trainer.steps_seen,
     mean_loss=round(running / max(trainer.steps_seen, 1), 4), trainer_loss=round(result.training_loss, 4))
