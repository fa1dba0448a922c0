#!/usr/bin/env python3
"""Triton's ptxas as `cudashim doctor` sees it, against the real tools (the nvcc 12.9 wheel's
ptxas in .deps/cu129, the CUDA 13.0 toolkit's /usr/local/cuda/bin/ptxas):

  - each ptxas, bundled in a crafted site-packages/triton/backends/nvidia/bin/, has the release
    doctor reads from its bytes equal to what `ptxas --version` prints;
  - for each SM, doctor reports triton.ptxas-unsupported-sm exactly when that ptxas refuses to
    assemble a one-kernel PTX file for the SM (ptxas -arch=sm_XX).

Tools that do not exist are skipped; exit 77 when none is left.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

PTX = ".version 6.0\n.target sm_50\n.address_size 64\n.visible .entry k() { ret; }\n"
SMS = (70, 75, 80, 86, 89, 90, 100, 101, 103, 110, 120, 121)
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    passed, failed = passed + (1 if ok else 0), failed + (0 if ok else 1)
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else "\n" + detail))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("tools", nargs="+")
    a = ap.parse_args()
    tools = [t for t in a.tools if os.access(t, os.X_OK)]
    if not tools:
        print("skip: none of the ptxas tools exists (run scripts/setup.sh)")
        return 77
    for tool in tools:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"release (\d+\.\d+), V(\d+\.\d+\.\d+)", out)
        check(m is not None, f"{tool}: --version prints a release", out)
        if m is None:
            continue
        with tempfile.TemporaryDirectory(prefix="cudashim-triton-") as tmp:
            sp = os.path.join(tmp, "site-packages")
            nv = os.path.join(sp, "triton", "backends", "nvidia")
            os.makedirs(os.path.join(nv, "bin"))
            os.symlink(os.path.abspath(tool), os.path.join(nv, "bin", "ptxas"))
            with open(os.path.join(nv, "driver.py"), "w") as f:
                f.write("libraries = ['libcuda.so.1']\n")
            ptx = os.path.join(tmp, "k.ptx")
            with open(ptx, "w") as f:
                f.write(PTX)
            env = {k: v for k, v in os.environ.items() if not k.startswith("TRITON_")}
            for sm in SMS:
                p = subprocess.run([a.cli, "doctor", "--json", "--sm", str(sm), sp], capture_output=True, text=True,
                                   timeout=120, env=env)
                doc = json.loads(p.stdout)
                if sm == SMS[0]:
                    got = doc["triton"][0]["ptxas_version"] if doc["triton"] else None
                    check(got == m.group(2), f"{tool}: doctor reads V{got} from the binary, --version says V{m.group(2)}")
                refused = any(f["id"] == "triton.ptxas-unsupported-sm" for f in doc["findings"])
                assembles = subprocess.run([tool, f"-arch=sm_{sm}", ptx, "-o", os.path.join(tmp, "k.cubin")],
                                           capture_output=True, timeout=120).returncode == 0
                check(refused != assembles,
                      f"CUDA {m.group(1)} ptxas, sm_{sm}: {'assembles' if assembles else 'refuses'}; doctor "
                      f"{'flags it' if refused else 'does not flag it'}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
