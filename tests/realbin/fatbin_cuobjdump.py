#!/usr/bin/env python3
"""`cudashim doctor`'s fatbin reader against NVIDIA's cuobjdump (the nvidia-cuda-cuobjdump wheel
that scripts/setup.sh unpacks into .deps/realbin/cuobjdump) on real files:

  - per architecture, the cubins and PTX doctor counts in .nv_fatbin equal what
    `cuobjdump --list-elf --list-ptx` lists (sm_90a and the like included);
  - for a range of GPUs, the file-level verdict (sass / ptx_jit / none) equals the one the
    cuobjdump listing implies under the CUDA compatibility rules.

Files that do not exist are skipped (e.g. no /usr/local/cuda); exit 77 when none is left.
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{detail}")


def cuobjdump_counts(cuobjdump, path):
    """{"sm_90": n, "sm_90a": n, "compute_90": n} from the listing's file names."""
    p = subprocess.run([cuobjdump, "--list-elf", "--list-ptx", path], capture_output=True, text=True, timeout=600)
    counts = collections.Counter()
    for line in p.stdout.splitlines():
        m = re.match(r"\s*(ELF|PTX) file\s+\d+: .*\.sm_(\d+[a-z]?)\.(cubin|ptx)$", line)
        if m:
            counts[("sm_" if m.group(1) == "ELF" else "compute_") + m.group(2)] += 1
    return counts


def cuobjdump_bytes(cuobjdump, path):
    """{"sm_90": (entries, bytes), "compute_90": (entries, bytes)} from the files that
    `cuobjdump --extract-elf all` and `--extract-ptx all` write (in a temporary folder)."""
    sizes = collections.defaultdict(lambda: [0, 0])
    with tempfile.TemporaryDirectory(prefix="cudashim-xelf-") as tmp:
        for flag in ("--extract-elf", "--extract-ptx"):
            subprocess.run([os.path.abspath(cuobjdump), flag, "all", os.path.abspath(path)], cwd=tmp, capture_output=True, timeout=1200)
        for name in os.listdir(tmp):
            m = re.match(r".*\.sm_(\d+[a-z]?)\.(cubin|ptx)$", name)
            if not m:
                continue
            key = ("sm_" if m.group(2) == "cubin" else "compute_") + m.group(1)
            sizes[key][0] += 1
            sizes[key][1] += os.path.getsize(os.path.join(tmp, name))
    return {k: tuple(v) for k, v in sizes.items()}


def expected_coverage(counts, sm):
    def split(name):
        m = re.match(r"(sm|compute)_(\d+)([a-z]?)", name)
        return m.group(1), int(m.group(2)), m.group(3)
    cubins = [split(n) for n in counts if n.startswith("sm_")]
    ptx = [split(n) for n in counts if n.startswith("compute_")]
    def runs(arch, suffix):
        return arch == sm if suffix == "a" else (arch // 10 == sm // 10 and arch % 10 <= sm % 10)
    if any(runs(a, s) for _, a, s in cubins):
        return "sass"
    if any((a == sm if s == "a" else a <= sm) for _, a, s in ptx):
        return "ptx_jit"
    return "none"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--deps", required=True, help=".deps/realbin")
    ap.add_argument("--bytes", action="append", default=[],
                    help="also compare the uncompressed bytes per architecture with what cuobjdump extracts from this file")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    cuobjdump = os.path.join(a.deps, "cuobjdump/nvidia/cu13/bin/cuobjdump")
    if not os.path.exists(cuobjdump):
        print(f"skip: {cuobjdump} missing (run scripts/setup.sh)")
        return 77
    files = [f for f in a.files if os.path.exists(f)]
    for f in set(a.files) - set(files):
        print(f"note: {f} not here, skipped")
    if not files:
        print("skip: none of the files exists")
        return 77

    for path in files:
        name = os.path.basename(path)
        want = cuobjdump_counts(cuobjdump, path)
        check(sum(want.values()) > 0, f"{name}: cuobjdump lists code", str(want))
        for sm in (75, 80, 86, 90, 100, 120):
            p = subprocess.run([a.cli, "doctor", "--json", "--sm", str(sm), path], capture_output=True, text=True, timeout=600)
            lib = json.loads(p.stdout)["libraries"][0]
            fb = lib.get("fatbin")
            if fb is None:
                check(False, f"{name}: doctor sees a fatbin", p.stdout[:2000])
                break
            if sm == 90:
                got = {k: v for k, v in fb["arch_counts"].items() if not k.startswith("lto_")}
                check(got == dict(want), f"{name}: {fb['entries']} entries, per-architecture counts equal cuobjdump's",
                      f"doctor:    {sorted(got.items())}\ncuobjdump: {sorted(want.items())}")
            # File-level verdict: any container. (doctor's own verdict leaves out containers
            # known to hold no kernel; for these files the answers agree.)
            check(fb["coverage"] == expected_coverage(want, sm),
                  f"{name}: sm_{sm} -> {fb['coverage']} (cuobjdump's listing implies {expected_coverage(want, sm)})")

    # Bytes per architecture: doctor's uncompressed sizes (from the entry headers) against the
    # files cuobjdump extracts. cuobjdump writes PTX without its final NUL: one byte per entry.
    for path in [f for f in a.bytes if os.path.exists(f)]:
        name = os.path.basename(path)
        want = cuobjdump_bytes(cuobjdump, path)
        p = subprocess.run([a.cli, "doctor", "--json", "--sm", "90", path], capture_output=True, text=True, timeout=600)
        per_arch = json.loads(p.stdout)["libraries"][0]["fatbin"]["bytes"]["per_arch"]
        got = {}
        for arch, b in per_arch.items():
            if arch.startswith("lto_"):
                continue
            n, size = b["entries"], b["uncompressed_bytes"]
            got[arch] = (n, size - n if arch.startswith("compute_") else size)
        total = sum(v[1] for v in want.values())
        check(got == want and total > 0,
              f"{name}: uncompressed bytes per architecture equal cuobjdump's extracted files "
              f"({len(want)} architectures, {total / 2**20:.1f} MiB)",
              f"doctor:    {sorted(got.items())}\ncuobjdump: {sorted(want.items())}")

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
