#!/usr/bin/env python3
"""policy_messages.py SHIM FAKECUDA_DIR PROG: what a CUDA process says about its settings is
bounded, exact and inert on a terminal (issue 22, item 10). PROG is tests/progs/driver_paths;
each policy says on_invalid = "warn", so the job runs and prints its warnings.

 - 250 unknown keys: the first 10, then "... and K more" (300,000 printed 49 MB to every
   process's stderr); a file of more keys than a policy may hold (256), or over 64 KiB, is one
   error saying so, and is not parsed.
 - a table or an array as a value: "is a table" / "is an array" (it was '\\x01').
 - values with a newline or over 4,000 characters: said so (it was "use a non-empty value").
 - a UTF-8 byte order mark: accepted (it was refused as a non-ASCII character).
 - escape sequences in the environment: written as \\x1b, never sent to the terminal."""
import os
import subprocess
import sys
import tempfile

shim, fake, prog = sys.argv[1:4]
errs = []
WARN = '[policy]\non_invalid = "warn"\n'


def run(d, policy_text, **extra):
    path = os.path.join(d, "policy.toml")
    with open(path, "wb") as f:
        f.write(policy_text if isinstance(policy_text, bytes) else policy_text.encode())
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
    env.update(LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=d, CUDASHIM_POLICY=path)
    env.update(extra)
    p = subprocess.run([prog, "procaddr", "3"], env=env, capture_output=True, timeout=60, cwd=d)  # CUDASHIM_OUT=. lands here
    if p.returncode != 0 or b"expect_calls" not in p.stdout:
        errs.append(f"the job must run: exit {p.returncode}: {p.stderr[-300:]!r}")
    return path, p.stderr.decode("utf-8", errors="replace")


with tempfile.TemporaryDirectory() as d:
    path, err = run(d, WARN + "[memory]\n" + "".join(f"k{i}=1\n" for i in range(250)))
    lines = [l for l in err.splitlines() if "invalid policy" in l]
    if len(lines) != 11 or "... and 240 more errors" not in lines[-1] or len(err) > 8192:
        errs.append(f"250 unknown keys: {len(lines)} lines, {len(err)} bytes of stderr; last {lines[-1:]}")
    # Not parsed, so its own on_invalid is not read either: the environment says warn.
    for n, what in ((1000, "holds 1003 keys and section headers, more than the 256"),
                    (300000, "larger than 64 KiB, the limit for this file")):
        path, err = run(d, WARN + "[memory]\n" + "".join(f"key{i}=1\n" for i in range(n)), CUDASHIM_ON_INVALID="warn")
        lines = [l for l in err.splitlines() if "invalid policy" in l]
        if len(lines) != 1 or what not in lines[0]:
            errs.append(f"{n} unknown keys: expected one line with {what!r}: {lines}")

    path, err = run(d, WARN + "[memory]\ncap = [1, 2]\nmanaged = { a = 1 }\n")
    if f"{path}:4:7: memory.cap is an array, not a value" not in err or \
            f"{path}:5:11: memory.managed is a table, not a value" not in err or "\\x01" in err:
        errs.append(f"a table and an array: {err!r}")

    path, err = run(d, WARN, CUDASHIM_OUT=d + "\nx", CUDASHIM_PYTORCH_ALLOC_CONF="x" * 5000)
    if "(it holds a newline)" not in err or "(it is 5000 characters long)" not in err or "non-empty value" in err:
        errs.append(f"a newline, 5000 characters: {err!r}")

    path, err = run(d, b"\xef\xbb\xbf" + WARN.encode() + b'[memory]\nmanaged = "warn"\n')
    if "invalid policy" in err or "non-ASCII" in err:
        errs.append(f"a byte order mark must be accepted: {err!r}")

    path, err = run(d, WARN, CUDASHIM_MANAGED="\x1b]0;owned\x07\x1b[2Jx", CUDASHIM_SYNC_WARMUP_HITS="\x9b31m")
    if "\x1b" in err or "\x07" in err or "\\x1b]0;owned\\x07\\x1b[2Jx" not in err or "\\xc2\\x9b31m" not in err:
        errs.append(f"escape sequences must be written escaped: {err!r}")
for e in errs:
    print("FAIL: " + e)
if errs:
    sys.exit(1)
print("ok: messages bounded (10 + '... and K more'), tables and arrays named, newline and length said, "
      "a BOM accepted, control characters escaped")
