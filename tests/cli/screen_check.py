"""screen_check.py: what the summary a person reads must hold (issue 33 item 5), shared by the
CPU test (tests/cli/screen.py) and the GPU step (gpu/realworld/screen.py, STEPS=screen).

A summary is what `cudashim run` prints on stderr from its "== cudashim:" line to its last
line ("command exited with N"). It fits one screen: at most MAX_LINES lines, with each part a
person needs to read it there.
"""
import re

MAX_LINES = 25

# Each part: its name and a pattern one line of the summary must match.
HEADLINE = ("headline (host, cudashim, driver, CUDA runtime)", r"^\s+host .+, cudashim .+, driver .+, CUDA runtime ")
GPUS = ("headline's GPU and framework", r"^\s+GPUs \d+ .+; (?!no framework).+")
FINDING = ("a finding with its price", r"^\s+\S+\.\S+\s+\d+ calls .* blocked\s+at .*save \S+ ?\S*/step")
MEMORY = ("memory", r"^\s+device \d+: peak ")
LIBRARIES = ("the libraries in one line", r"^\s+libraries: \d+ CUDA librar(y|ies), one runtime \S+, consistent")
NO_CUDA = ("the processes that made no CUDA call, in one line", r"^(at least )?\d+ process(es)? made no CUDA call: \S")
GPU_IDLE = ("GPU idle with its diagnosis", r"^\s+GPU \d+: idle .*% of the steady state")


def summary_of(stderr):
    """The lines of the summary in a `cudashim run`'s stderr (from its '== cudashim:' line)."""
    lines = stderr.splitlines()
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("== cudashim:"):
            return lines[i:]
    return []


def problems(lines, parts, max_lines=MAX_LINES):
    """What is wrong with the summary `lines` against `parts` (a list of (name, pattern)): []
    when it fits and holds each part."""
    out = []
    if not lines:
        return ["no summary (no '== cudashim:' line)"]
    if len(lines) > max_lines:
        out.append(f"the summary is {len(lines)} lines, more than {max_lines}")
    for name, pattern in parts:
        if not any(re.search(pattern, l) for l in lines):
            out.append(f"the summary lacks {name} (no line matches {pattern!r})")
    if sum(1 for l in lines if re.search(NO_CUDA[1], l)) > 1:
        out.append("the processes that made no CUDA call take more than one line")
    return out
