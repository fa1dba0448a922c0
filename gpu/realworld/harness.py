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
