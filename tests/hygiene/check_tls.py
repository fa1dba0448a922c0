#!/usr/bin/env python3
"""check_tls.py LIB [MAX_BYTES]: the preload library's static TLS stays small (issue 37.1).

Every thread of a process that preloads the library carries its PT_TLS block (initial-exec
TLS is allocated at the top of each thread's stack by glibc), so a large block makes
pthread_create fail with EINVAL for small stacks: 96 KiB (three 4096-pointer argv buffers of
the execl wrappers) broke 16, 32 and 64 KiB stacks and Node.js under node-wide preload. The
ceiling, 512 bytes by default, is "a few hundred bytes": per-thread state beyond that belongs
in the recorder's thread slots. Prints the size and the largest TLS symbols.
"""
import re
import subprocess
import sys

lib = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 512
segs = subprocess.run(["readelf", "-lW", lib], check=True, capture_output=True, text=True).stdout
tls = [l.split() for l in segs.splitlines() if l.split()[:1] == ["TLS"]]
if len(tls) > 1:
    print(f"FAIL: {lib} has {len(tls)} PT_TLS segments")
    sys.exit(1)
memsz = int(tls[0][5], 16) if tls else 0
syms = subprocess.run(["readelf", "-sW", lib], check=True, capture_output=True, text=True).stdout
rows = []
for line in syms.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "TLS":
        rows.append((int(f[2], 0) if f[2].isdigit() else int(f[2], 16), f[7]))
top = ", ".join(f"{name} {size}" for size, name in sorted(set(rows), reverse=True)[:6])
print(f"{lib}: PT_TLS {memsz} bytes (ceiling {limit}); largest: {top or 'none'}")
if memsz > limit:
    print(f"FAIL: {memsz} bytes of static TLS per thread: pthread_create refuses small stacks; move per-thread "
          f"state to the recorder's thread slots (recorder/thread_slots.h)")
    sys.exit(1)
print("ok")
