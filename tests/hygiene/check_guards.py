#!/usr/bin/env python3
"""check_guards.py LIB: the preload library's own code has no guarded function-local statics.

A function-local static with a dynamic initializer (`static auto f = lookup();`) is guarded by
__cxa_guard_acquire: the first caller marks the guard "in progress", the others wait on it. A
thread that fork()s while another thread is inside such an initialization gives the child a
guard marked in progress by a thread that does not exist there: the child's first pass over
that line waits forever. It hung a forked child of preload.fork.threads in CI (8 threads in
hooks, one of them initializing policy::process_settings()'s defaults at the fork).

The library's own code (namespace cudashim, and its C API) therefore keeps none: use a
constant-initialized std::atomic filled on first use, pthread_once (glibc restarts an
interrupted once in a forked child), or initialize in the constructor. Guards of the
statically linked C++ runtime (locale ids and the like) are listed, not judged: they are
initialized before main or on first use of iostreams/locale, which the hooks never reach.
"""
import subprocess
import sys

lib = sys.argv[1]
nm = sys.argv[2] if len(sys.argv) > 2 else "nm"
out = subprocess.run([nm, "-C", lib], check=True, capture_output=True, text=True).stdout
guards = sorted({line.split("guard variable for ", 1)[1] for line in out.splitlines() if "guard variable for " in line})
ours = [g for g in guards if g.startswith("cudashim::") or g.startswith("cudashim_")]
print(f"{lib}: {len(guards)} guarded statics, {len(ours)} of them in cudashim's own code")
for g in ours:
    print(f"  {g}")
if ours:
    print("FAIL: a guarded static initializing in another thread at fork() leaves the child waiting on it forever; "
          "make it a constant-initialized std::atomic filled on first use, or use pthread_once")
    sys.exit(1)
print("ok")
