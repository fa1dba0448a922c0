#!/usr/bin/env python3
"""check_needed.py LIB: a preloaded library must pull only glibc's libraries
(libc, libm, libdl, libpthread, librt, the dynamic loader) and, for libelf, libz and
libzstd into the host process: no libstdc++, no libgcc_s, no libelf.so, no libfmt.
"""
import re
import subprocess
import sys

lib = sys.argv[1]
out = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True, text=True).stdout
needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
ok = re.compile(r"^(libc|libm|libdl|libpthread|librt|libz|libzstd)\.so\.\d+$|^ld-linux-(x86-64|aarch64)\.so\.[12]$")
bad = [n for n in needed if not ok.match(n)]
if bad:
    print(f"FAIL: {lib} needs non-system libraries: {bad} (all DT_NEEDED: {needed})")
    sys.exit(1)
header = subprocess.run(["readelf", "-h", lib], check=True, capture_output=True, text=True).stdout
if "AArch64" in header:
    # AArch64's linker sets no STATIC_TLS flag for initial-exec accesses; they show as
    # R_AARCH64_TLS_TPREL64 relocations (a GOT slot with the thread-pointer offset), while
    # a general-dynamic access would import __tls_get_addr.
    relocs = subprocess.run(["readelf", "-rW", lib], check=True, capture_output=True, text=True).stdout
    syms = subprocess.run(["readelf", "--dyn-syms", "-W", lib], check=True, capture_output=True, text=True).stdout
    tprel = relocs.count("R_AARCH64_TLS_TPREL64")
    if tprel == 0 or "__tls_get_addr" in syms:
        print(f"FAIL: {lib}: {tprel} initial-exec TLS relocations (R_AARCH64_TLS_TPREL64), "
              f"__tls_get_addr imported: {'__tls_get_addr' in syms}: the hot path would call __tls_get_addr")
        sys.exit(1)
    print(f"ok: DT_NEEDED = {needed}; initial-exec TLS ({tprel} R_AARCH64_TLS_TPREL64, no __tls_get_addr)")
    sys.exit(0)
tls = subprocess.run(["readelf", "-d", "-l", lib], check=True, capture_output=True, text=True).stdout
# initial-exec TLS shows as the STATIC_TLS flag on the dynamic section
if "STATIC_TLS" not in tls:
    print(f"FAIL: {lib} has no STATIC_TLS flag: the hot path would call __tls_get_addr")
    sys.exit(1)
print(f"ok: DT_NEEDED = {needed}; initial-exec TLS (STATIC_TLS)")
