#!/usr/bin/env python3
"""check_compat_table.py DEF ARCH LIBDIR: compat/glibc_2_28.def holds for ARCH's own glibc.

ARCH is x86_64 or aarch64; LIBDIR holds that architecture's libc.so.6, libpthread.so.0 and
libdl.so.2 (the build's, or any glibc of that architecture). The symbol versions of a
glibc differ by architecture: x86-64's oldest is GLIBC_2.2.5, AArch64's GLIBC_2.17 (its
first glibc), so each CUDASHIM_GLIBC_OLDER row names one per architecture. Fails, naming
the row, when
  - an OLDER row's version for ARCH is not exported for that name by LIBDIR's glibc, or
    is newer than GLIBC_2.28 (the tail jump would bind to nothing, or to too new a glibc);
  - an OWN row's name IS exported there at GLIBC_2.28 or older (then it is an OLDER row:
    our own copy of it would be needless).
Reads the files with readelf (any architecture's ELF).
"""
import re
import subprocess
import sys

LIMIT = (2, 28)
COLUMN = {"x86_64": 1, "aarch64": 2}


def version_tuple(v):
    return tuple(int(x) for x in v[len("GLIBC_"):].split("."))


def exported(libdir):
    """{name: set of GLIBC_ versions} over the glibc files in libdir."""
    out = {}
    for f in ("libc.so.6", "libpthread.so.0", "libdl.so.2"):
        text = subprocess.run(["readelf", "--dyn-syms", "-W", f"{libdir}/{f}"], check=True, capture_output=True,
                              text=True).stdout
        for line in text.splitlines():
            cols = line.split()
            if len(cols) < 8 or cols[6] == "UND":
                continue
            m = re.match(r"^([A-Za-z0-9_]+)@@?(GLIBC_[0-9.]+)", cols[7])
            if m:
                out.setdefault(m.group(1), set()).add(m.group(2))
    return out


def main(deffile, arch, libdir):
    if arch not in COLUMN:
        print(f"FAIL: unknown architecture {arch!r}: one of {sorted(COLUMN)}")
        return 1
    have = exported(libdir)
    errors, older, own = [], 0, 0
    for n, line in enumerate(open(deffile), 1):
        m = re.match(r"^CUDASHIM_GLIBC_OLDER\((\w+),\s*(GLIBC_[0-9.]+),\s*(GLIBC_[0-9.]+)\)", line)
        if m:
            older += 1
            name, version = m.group(1), m.group(1 + COLUMN[arch])
            if version not in have.get(name, set()):
                errors.append(f"{deffile}:{n}: {name}@{version}: not exported by {libdir}'s glibc "
                              f"(it has {sorted(have.get(name, set()), key=version_tuple) or 'no such name'})")
            elif version_tuple(version) > LIMIT:
                errors.append(f"{deffile}:{n}: {name}@{version} is newer than GLIBC_2.28")
            continue
        m = re.match(r"^CUDASHIM_GLIBC_OWN\((\w+)\)", line)
        if m:
            own += 1
            old = sorted(v for v in have.get(m.group(1), set()) if version_tuple(v) <= LIMIT)
            if old:
                errors.append(f"{deffile}:{n}: {m.group(1)} is ours, but {libdir}'s glibc exports it as {old}: "
                              "make it an OLDER row")
            continue
        if line.startswith("CUDASHIM_GLIBC_"):
            errors.append(f"{deffile}:{n}: not a row this check reads: {line.strip()}")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    if older == 0:
        print(f"FAIL: {deffile}: no CUDASHIM_GLIBC_OLDER row read")
        return 1
    print(f"ok: {older} OLDER rows bind to versions {arch}'s glibc in {libdir} exports (2.28 or older), "
          f"{own} OWN rows have no such version there")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: check_compat_table.py DEF ARCH LIBDIR")
    sys.exit(main(*sys.argv[1:]))
