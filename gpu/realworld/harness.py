"""harness.py: the command line every corpus program shares, and its "no CUDA" exit.

Each program of gpu/realworld is one file run in two forms: `python3 PROG` (clean) and
`python3 PROG --planted` (the one habit marked `# PLANTED` in that file is switched on).
Nothing here touches the GPU: every CUDA call of a program is in the program's own file,
so that a finding at a user's line names that file (gpu/realworld/check.py relies on it).
"""
import argparse
import importlib
import os
import sys
import time

NO_CUDA_EXIT = 2  # check.py reads this exit status as "no CUDA here", not as a failure of the shim


def parse(description, steps=40, extra=None):
    """The program's arguments: --planted, --steps N (and what `extra(parser)` adds)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--planted", action="store_true", help="switch on the habit marked '# PLANTED'")
    p.add_argument("--steps", type=int, default=int(os.environ.get("CORPUS_STEPS", steps)),
                   help=f"training steps (default {steps}, or $CORPUS_STEPS)")
    if extra:
        extra(p)
    return p.parse_args()


def no_cuda(why):
    """Leave at once with one line saying why this host cannot run the program."""
    prog = os.path.basename(sys.argv[0])
    print(f"{prog}: no CUDA here: {why}; run it on a host with an NVIDIA GPU (see gpu/realworld/README.md)",
          file=sys.stderr)
    sys.exit(NO_CUDA_EXIT)


def need(module):
    """Import a framework, or leave with no_cuda() when it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        no_cuda(f"{module} is not installed ({e})")


def need_torch_cuda():
    """torch, with a CUDA device it can use; else no_cuda()."""
    torch = need("torch")
    if not torch.cuda.is_available():
        no_cuda(f"torch {torch.__version__} sees no CUDA device (torch.cuda.is_available() is False)")
    return torch


def done(name, args, **values):
    """The one line a program prints at its end (for people; the checker reads reports only)."""
    form = "planted" if args.planted else "clean"
    print(f"{name} ({form}, {args.steps} steps): " + ", ".join(f"{k} {v}" for k, v in values.items()))


def alternate_arg(p):
    """--alternate R: the price benchmark's form (gpu/realworld/price_bench.py)."""
    p.add_argument("--alternate", type=int, default=0, metavar="R",
                   help="R timed blocks of --steps steps each, fixed and planted in turn (fixed first), after "
                        "two untimed warm-up blocks (fixed, planted); the block times go to $CORPUS_TIMING (JSON)")


class BlockClock:
    """The blocks a habit program runs, and their wall times (time.perf_counter only: nothing
    here touches the GPU; the program synchronizes at each block's end, in its own file).

    Plain runs: one block of --steps steps, planted or not as --planted says. --alternate R:
    two untimed warm-up blocks, fixed then planted (each form's first calls: a torch.compile'd
    function compiles once per form, which timed the first fixed block at seconds; and the
    planted sites pass the warm-up), then R blocks alternating fixed and planted, fixed first;
    R <= 8 keeps the block-end sync under sync.warmup_hits visits, out of the loop's findings."""

    def __init__(self, name, args):
        self.name, self.args, self.times = name, args, []
        r = max(0, min(int(getattr(args, "alternate", 0) or 0), 8))
        if r:
            self.plan = [(False, args.steps, False), (True, args.steps, False)] + \
                [(i % 2 == 1, args.steps, True) for i in range(r)]
        else:
            self.plan = [(args.planted, args.steps, True)]

    def blocks(self):
        """Yields (planted, steps) per block; call end() after each block's closing sync."""
        for planted, steps, timed in self.plan:
            self._t0 = time.perf_counter()
            yield planted, steps
            if timed:
                self.times.append(dict(planted=planted, steps=steps, seconds=time.perf_counter() - self._t0))

    def write(self):
        """The block times to $CORPUS_TIMING, when set."""
        path = os.environ.get("CORPUS_TIMING")
        if path:
            import json
            with open(path, "w", encoding="utf-8") as f:
                json.dump(dict(program=self.name, blocks=self.times), f)


def host_work(ms):
    """A step's own CPU work after its read-back (preparing the next batch, logging): a busy
    wait of `ms` milliseconds, the same length every step, so that the GPU idle a sync leaves
    is known."""
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        pass
