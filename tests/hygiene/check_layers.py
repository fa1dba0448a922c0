#!/usr/bin/env python3
"""check_layers.py ROOT: the layers include only downwards, and only shim/ sees CUDA.

The order (README.md, "Layout"), lowest first:

    catalog < symbols < recorder < policy < report < shim, tools

A file of a layer may include its own layer's headers and those of the layers below it,
never one above; shim/ (the preload library) and tools/ (the CLI) are both on top and
include neither each other. Below shim/, nothing includes a CUDA header (cuda.h,
cuda_runtime*.h, cudaTypedefs.h, shim/cuda_abi.h): the tables name CUDA types only in
columns that shim/ alone expands. No layer's CMakeLists.txt compiles another folder's
sources. Every violation is printed as file:line and what it includes; exit 1 if any.
"""
import os
import re
import sys

ORDER = {"catalog": 0, "symbols": 1, "recorder": 2, "policy": 3, "report": 4, "shim": 5, "tools": 5}
CUDA_HEADERS = re.compile(r'^\s*#\s*include\s*[<"](cuda\.h|cuda_runtime[a-z_]*\.h|cudaTypedefs\.h|shim/cuda_abi\.h)[>"]')
OURS = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/[^"]+"')
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".c", ".def", ".inc", ".S")


def violations(root):
    for layer, rank in ORDER.items():
        top = os.path.join(root, layer)
        for dirpath, _, files in os.walk(top):
            for name in sorted(files):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if name == "CMakeLists.txt":
                    text = open(path, errors="replace").read()
                    for m in re.finditer(r"\$\{(?:PROJECT|CMAKE)_SOURCE_DIR\}/([a-z_]+)/", text):
                        if m.group(1) != layer:
                            yield f"{rel}: compiles a source of {m.group(1)}/ (each layer builds its own files)"
                    continue
                if not name.endswith(SOURCES):
                    continue
                for n, line in enumerate(open(path, errors="replace"), 1):
                    if rank < ORDER["shim"] and CUDA_HEADERS.match(line):
                        yield f"{rel}:{n}: {layer}/ includes a CUDA header ({line.strip()}); only shim/ sees CUDA"
                    m = OURS.match(line)
                    if not m or m.group(1) not in ORDER or m.group(1) == layer:
                        continue
                    other = m.group(1)
                    if ORDER[other] > rank or (ORDER[other] == rank):
                        yield f"{rel}:{n}: {layer}/ includes {other}/ ({line.strip()}), a layer above or beside it"


def self_test():
    """The check fails where it should: a planted tree with one violation of each rule."""
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        plant = {
            "recorder/a.h": '#include "shim/pool.h"\n',          # upwards
            "policy/b.cpp": "#include <cuda.h>\n",                # CUDA below shim/
            "tools/c.cpp": '#include "shim/hook_abi.h"\n',       # beside
            "catalog/CMakeLists.txt": "add_library(x ${PROJECT_SOURCE_DIR}/shim/x.cpp)\n",
            "shim/d.cpp": '#include "policy/ok.h"\n#include <cuda.h>\n',  # fine
            "policy/e.cpp": '#include "report/report.h"\n',    # upwards: policy/ decides, report/ renders
            "report/f.cpp": '#include "policy/ok.h"\n#include "recorder/ok.h"\n',  # fine
        }
        for rel, text in plant.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        got = sorted(v.split(":")[0] for v in violations(root))
        want = sorted(["catalog/CMakeLists.txt", "policy/b.cpp", "policy/e.cpp", "recorder/a.h", "tools/c.cpp"])
        if got != want:
            print(f"self-test: expected violations in {want}, got {got}")
            return False
    return True


def main():
    if not self_test():
        return 1
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    bad = list(violations(root))
    for v in bad:
        print(v)
    order = " < ".join(k for k in ORDER if ORDER[k] < ORDER["shim"]) + " < shim, tools"
    print(f"layers: {order}: {len(bad)} violation(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
