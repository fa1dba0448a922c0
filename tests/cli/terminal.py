#!/usr/bin/env python3
"""terminal.py CLI SHIM FAKECUDA_DIR PROG: the terminal behaviour of cudashim.

- While the job runs the shim is quiet: each finding is one line when it first appears
  (no repeats however many calls hit it), and CUDASHIM_LOG_LEVEL=error silences them.
- `cudashim run` and `cudashim report` colour their summaries only on a terminal: on a
  pseudo-terminal there are ANSI escapes, with NO_COLOR set there are none, and through a
  pipe there are none.
"""
import os
import pty
import re
import subprocess
import sys
import tempfile

cli, shim, fake, prog = sys.argv[1:5]
ESC = re.compile(r"\x1b\[")
errors = []


def on_pty(cmd, env):
    """Runs cmd with stdout and stderr on a pseudo-terminal; returns what it wrote."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, env=env, stdout=slave, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    p.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode(errors="replace")


with tempfile.TemporaryDirectory() as out:
    # The double's syncs wait 300 us: the explicit sync costs a step time worth a warning (below
    # sync.warn_min_saving_us it would be an info line, hidden at this log level).
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, FAKECUDA_SYNC_DELAY_US="300")
    env.pop("NO_COLOR", None)
    # 1. quiet while running: explicit_sync hits its site many times; one line per finding id.
    p = subprocess.run([cli, "run", "--quiet", "--out", out, "--", prog, "explicit_sync"], env=env,
                       capture_output=True, text=True, timeout=60)
    finding_lines = [l for l in p.stderr.splitlines() if re.search(r"warning: \[[a-z.-]+\]", l)]
    ids = [re.search(r"\[([a-z.-]+)\]", l).group(1) for l in finding_lines]
    if p.returncode != 0 or not ids or len(ids) != len(set(ids)):
        errors.append(f"expected one line per finding id while running, got {ids} (exit {p.returncode})")
    if ESC.search(p.stderr):
        errors.append("escape codes in the shim's log lines through a pipe")
    q = subprocess.run([cli, "run", "--quiet", "--out", out + "/quiet", "--", prog, "explicit_sync"],
                       env=dict(env, CUDASHIM_LOG_LEVEL="error"), capture_output=True, text=True, timeout=60)
    if any("warning:" in l for l in q.stderr.splitlines()):
        errors.append(f"CUDASHIM_LOG_LEVEL=error still printed warnings: {q.stderr[-300:]}")
    # 2. colour only on a terminal, never with NO_COLOR or through a pipe.
    tty = on_pty([cli, "report", out], env)
    no_color = on_pty([cli, "report", out], dict(env, NO_COLOR="1"))
    piped = subprocess.run([cli, "report", out], env=env, capture_output=True, text=True).stdout
    if not ESC.search(tty):
        errors.append("no colour on a terminal")
    if ESC.search(no_color):
        errors.append("colour on a terminal with NO_COLOR set")
    if ESC.search(piped):
        errors.append("colour through a pipe")
    if "explicit" not in tty or "explicit" not in no_color:
        errors.append("the summary lacks the finding")
    print(f"findings logged while running: {ids}; report on a tty: {len(ESC.findall(tty))} escapes, "
          f"with NO_COLOR: {len(ESC.findall(no_color))}, piped: {len(ESC.findall(piped))}")
for e in errors:
    print("FAIL: " + e)
print("ok: terminal behaviour" if not errors else "")
sys.exit(1 if errors else 0)
