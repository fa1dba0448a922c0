#!/usr/bin/env python3
"""The classic cuSPARSE/nvJitLink breakage, predicted by `cudashim doctor` and confirmed by the
real loader, on NVIDIA's own wheels (scripts/setup.sh unpacks them into .deps/realbin):

  cusparse122/nvidia/cusparse/lib/libcusparse.so.12   cuSPARSE 12.2.0.103 (CUDA 12.3): calls __nvJitLink*_12_3
  cusparse122/nvidia/nvjitlink/lib/libnvJitLink.so.12 nvJitLink 12.3.101, where its RUNPATH looks
  nvjitlink121/nvidia/nvjitlink/lib/libnvJitLink.so.12 nvJitLink 12.1.105: too old

With the old nvJitLink first on LD_LIBRARY_PATH, doctor must name the missing symbol, the file
the loader picks and why, and the real loader (dlopen RTLD_NOW in a child) must fail on that
same symbol. With the right one first, or with no LD_LIBRARY_PATH, both must be clean.
Exit 77 (skipped) when the wheels are not installed.
"""
import argparse
import json
import os
import re
import subprocess
import sys

passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok: {what}")
    else:
        failed += 1
        print(f"FAIL: {what}\n{detail}")


def env_with(llp):
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    if llp is not None:
        env["LD_LIBRARY_PATH"] = llp
    return env


def doctor(cli, lib, llp):
    p = subprocess.run([cli, "doctor", "--json", "--sm", "90", lib], env=env_with(llp), capture_output=True, text=True,
                       timeout=300)
    return p.returncode, json.loads(p.stdout), p.stderr


def real_dlopen(lib, llp):
    """The real loader's verdict: 'ok' or dlerror()'s text (a child started with `llp`)."""
    code = ("import ctypes, os, sys\n"
            "try:\n"
            "    ctypes.CDLL(sys.argv[1], mode=os.RTLD_NOW)\n"
            "    print('ok')\n"
            "except OSError as e:\n"
            "    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code, lib], env=env_with(llp), capture_output=True, text=True, timeout=120)
    return (p.stdout + p.stderr).strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--deps", required=True, help=".deps/realbin")
    a = ap.parse_args()
    cusparse = os.path.join(a.deps, "cusparse122/nvidia/cusparse/lib/libcusparse.so.12")
    new_dir = os.path.join(a.deps, "cusparse122/nvidia/nvjitlink/lib")
    old_dir = os.path.join(a.deps, "nvjitlink121/nvidia/nvjitlink/lib")
    for p in (cusparse, os.path.join(new_dir, "libnvJitLink.so.12"), os.path.join(old_dir, "libnvJitLink.so.12")):
        if not os.path.exists(p):
            print(f"skip: {p} missing (run scripts/setup.sh)")
            return 77

    # 1. The old nvJitLink first: doctor predicts, the loader confirms.
    rc, report, err = doctor(a.cli, cusparse, old_dir)
    shortfalls = [f for f in report["findings"] if f["id"] == "library.versioned-symbol-shortfall"]
    check(rc == 4, "doctor exits 4 (error) with the old nvJitLink first", err)
    check(len(shortfalls) == 1, "one library.versioned-symbol-shortfall finding", json.dumps(report["findings"], indent=1))
    if not shortfalls:
        return 1
    f = shortfalls[0]
    text = "\n".join([f["message"]] + f["evidence"])
    m = re.search(r"undefined symbol: (__nvJitLink\w+_12_(\d+)), version libnvJitLink\.so\.12", f["message"])
    check(m is not None, "the finding names an __nvJitLink*_12_X symbol and its version", text)
    old_lib = os.path.join(old_dir, "libnvJitLink.so.12")
    check(f"the loader picks {old_lib} [LD_LIBRARY_PATH]" in text, "the finding names the file the loader picks and why", text)
    check("needs nvJitLink >= 12.3" in text and "provides API level 12.1" in text,
          "the finding explains nvJitLink's minimum minor in the name", text)
    check(f["subject"] == cusparse and f["severity"] == "error" and f["fix"], "subject, severity and fix", json.dumps(f))
    lib = report["libraries"][0]
    check(lib.get("version") == "12.2.0.103" and lib.get("version_source", "").startswith("wheel RECORD"),
          "cuSPARSE's version from its wheel RECORD", json.dumps(lib))
    real = real_dlopen(cusparse, old_dir)
    check(m is not None and f"undefined symbol: {m.group(1)}, version libnvJitLink.so.12" in real,
          "the real loader fails on the same symbol", f"doctor: {f['message']}\nloader: {real}")
    needed = {re.sub(r"^needs (\S+)@.*", r"\1", e) for e in f["evidence"] if e.startswith("needs ")}
    r = re.search(r"undefined symbol: (\S+),", real)
    check(r is not None and r.group(1) in needed, "the loader's symbol is among those doctor lists", real)

    # 2. The right nvJitLink first, and no LD_LIBRARY_PATH at all (RUNPATH finds it): clean.
    for llp, why, reason in ((new_dir, "the right nvJitLink first", "LD_LIBRARY_PATH"), (None, "no LD_LIBRARY_PATH", "runpath")):
        rc, report, err = doctor(a.cli, cusparse, llp)
        errors = [f for f in report["findings"] if f["severity"] == "error"]
        check(not errors, f"doctor reports no error with {why}", json.dumps(errors, indent=1))
        check(rc in (0, 1), f"doctor exits 0 or 1 with {why} (got {rc})", err)
        needed = report["libraries"][0]["cuda_needed"]
        check(len(needed) == 1 and needed[0]["reason"] == reason and os.path.samefile(needed[0]["path"], os.path.join(new_dir, "libnvJitLink.so.12")),
              f"libnvJitLink.so.12 found through {reason} with {why}", json.dumps(needed, indent=1))
        real = real_dlopen(cusparse, llp)
        check(real == "ok", f"the real loader opens it with {why}", real)

    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
