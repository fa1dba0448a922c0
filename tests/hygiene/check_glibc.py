#!/usr/bin/env python3
"""check_glibc.py [--objdump TOOL] FILE...: each shipped binary loads on glibc 2.28 (RHEL 8) and newer.

For each file, lists the versioned symbols it needs from the system (glibc's
GLIBC_x.y, libstdc++'s GLIBCXX_/CXXABI_, libgcc's GCC_) and prints the highest glibc
version with the symbols that need it. Fails when a file needs a glibc newer than 2.28,
or any libstdc++/libgcc version at all (both are linked statically: a cluster's
libstdc++ is often older than the build machine's). A static executable needs nothing.
When it fails, compat/glibc_2_28.def is where the symbol goes.
--objdump: the objdump that reads the files (the AArch64 tree passes
aarch64-linux-gnu-objdump: the host's reads x86-64 only); default `objdump`.
"""
import re
import subprocess
import sys

LIMIT = (2, 28)


def version_tuple(v):
    return tuple(int(x) for x in v.split("."))


OBJDUMP = "objdump"


def needs(path):
    """{version string: [symbols]} of the file's undefined versioned symbols."""
    out = subprocess.run([OBJDUMP, "-T", path], capture_output=True, text=True)
    if out.returncode != 0:
        if "not a dynamic object" in out.stderr or "no symbols" in out.stderr:
            return {}
        sys.exit(f"FAIL: objdump -T {path}: {out.stderr.strip()}")
    found = {}
    for line in out.stdout.splitlines():
        m = re.search(r"\*UND\*\s+\S+\s+\(?((?:GLIBC|GLIBCXX|CXXABI|GCC)_[0-9.]+)\)?\s+(\S+)$", line)
        if m:
            found.setdefault(m.group(1), []).append(m.group(2))
    return found


def main(files):
    global OBJDUMP
    if files[:1] == ["--objdump"]:
        OBJDUMP, files = files[1], files[2:]
    errors = []
    for f in files:
        n = needs(f)
        glibc = sorted((version_tuple(v[len("GLIBC_"):]), v) for v in n if v.startswith("GLIBC_"))
        others = sorted(v for v in n if not v.startswith("GLIBC_"))
        top = glibc[-1][1] if glibc else "none (static)"
        print(f"{f}: highest glibc version needed: {top}")
        for t, v in glibc:
            if t > LIMIT:
                errors.append(f"{f} needs {v}: {', '.join(sorted(n[v]))} (add a row to compat/glibc_2_28.def)")
        for v in others:
            errors.append(f"{f} needs {v} from a shared libstdc++/libgcc: {', '.join(sorted(n[v])[:5])} "
                          "(link them statically)")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print(f"ok: {len(files)} binaries need nothing newer than GLIBC_{LIMIT[0]}.{LIMIT[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
