#!/usr/bin/env python3
"""completion_man.py CLI: the bash and zsh completions and the man page are generated from the
same table as `--help`: each names every command and every option that `cudashim help` and
`cudashim help CMD` list. The bash script is syntax-checked and driven (COMP_WORDS as bash sets
them on TAB); the zsh one is checked with `zsh -n` when zsh is here; the man page renders with
groff (or `man -l`) without a warning when either is here."""
import os
import re
import shutil
import subprocess
import sys

cli = sys.argv[1]
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
sh = lambda *a: subprocess.run([cli, *a], capture_output=True, text=True, env=env)
fails = []

top = sh("help").stdout
commands = re.findall(r"^  (\S+(?: \S+)?)  ", top.split("commands:\n")[1].split("\n\n")[0], re.M)
if len(commands) < 8:
    fails.append(f"`cudashim help` lists only {commands}")
options = {c: sorted(set(re.findall(r"^  (--[a-z-]+)", sh("help", c).stdout, re.M))) for c in commands}
program_options = re.findall(r"^  (--[a-z-]+)", top.split("options:\n")[1], re.M)

texts = {"bash": sh("completion", "bash").stdout, "zsh": sh("completion", "zsh").stdout, "man": sh("man").stdout}
for what, text in texts.items():
    norm = text.replace("\\-", "-")  # roff writes a minus as \-
    for c in commands:
        for word in c.split():
            if not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", norm):
                fails.append(f"{what}: the command {c!r} is missing")
        for o in options[c]:
            if o not in norm:
                fails.append(f"{what}: {c} {o} is missing")
    for o in program_options:
        if o not in norm:
            fails.append(f"{what}: the program's {o} is missing")

# bash: the script parses, and completes as a user would see it.
p = subprocess.run(["bash", "-n"], input=texts["bash"], capture_output=True, text=True)
if p.returncode != 0:
    fails.append(f"bash -n: {p.stderr}")
DRIVE = texts["bash"] + r'''
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _cudashim; echo "${COMPREPLY[*]}"; }
t cudashim doc
t cudashim run --o
t cudashim run --out /tmp python3 --o
t cudashim report --j
t cudashim completion ''
t cudashim policy ''
t cudashim policy check --h
t cudashim help pol
t cudashim --ver
'''
want = ["doctor", "--out", "", "--json", "bash zsh", "check", "--help", "policy", "--version"]
p = subprocess.run(["bash", "-c", DRIVE], capture_output=True, text=True, cwd="/")
got = p.stdout.splitlines()
if got != want:
    fails.append(f"bash completion: got {got}, expected {want} ({p.stderr.strip()})")

if shutil.which("zsh"):
    p = subprocess.run(["zsh", "-n"], input=texts["zsh"], capture_output=True, text=True)
    if p.returncode != 0:
        fails.append(f"zsh -n: {p.stderr}")
else:
    print("note: no zsh here: the zsh script's syntax is not checked")
if not texts["zsh"].startswith("#compdef cudashim\n"):
    fails.append("zsh: the script does not start with #compdef cudashim")

# The man page renders, without a warning.
if shutil.which("groff"):
    p = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z"], input=texts["man"], capture_output=True, text=True)
    if p.returncode != 0 or p.stderr:
        fails.append(f"groff: exit {p.returncode}: {p.stderr[:500]}")
    r = subprocess.run(["groff", "-man", "-Tutf8"], input=texts["man"], capture_output=True, text=True)
    plain = re.sub(r".\x08", "", r.stdout)
    for heading in ("NAME", "SYNOPSIS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT"):
        if not re.search(rf"^{heading}", plain, re.M):
            fails.append(f"man: no {heading} section in the rendered page")
    if "cudashim run [OPTIONS] [--] CMD [ARGS...]" not in plain:
        fails.append("man: the synopsis of run is not rendered as typed")
elif shutil.which("man"):
    p = subprocess.run(["man", "-l", "-"], input=texts["man"], capture_output=True, text=True,
                       env=dict(env, MANPAGER="cat", PAGER="cat"))
    if p.returncode != 0:
        fails.append(f"man -l: exit {p.returncode}: {p.stderr[:300]}")
else:
    print("note: neither groff nor man here: the page's rendering is not checked")
for f in fails:
    print("FAIL: " + f)
sys.exit(1 if fails else print(f"ok: bash, zsh and man name {len(commands)} commands and every option; bash completes; "
                               "the man page renders") or 0)
