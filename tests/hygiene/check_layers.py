#!/usr/bin/env python3
"""check_layers.py ROOT: the layers include only downwards, and only shim/ sees CUDA.

The order (README.md, "Layout"), lowest first:

    catalog < symbols < recorder < policy < report < shim, tools

A file of a layer may include its own layer's headers and those of the layers below it,
never one above; shim/ (the preload library) and tools/ (the CLI) are both on top and
include neither each other. Below shim/, nothing includes a CUDA header (cuda.h,
cuda_runtime*.h, cudaTypedefs.h, shim/cuda_abi.h): the tables name CUDA types only in
columns that shim/ alone expands. No layer's CMakeLists.txt compiles another folder's
sources.

JSON is written in one place. The writer (recorder/json_writer.h, with the only string
escaper) sits in recorder/, the lowest layer that writes JSON: the event stream's lines.
Only recorder/ (the stream, and the library objects its lines share with the report) and
report/ (the report's sections, the trace) include it or recorder/library_json.h; policy/
returns structs for report/ to render, and shim/ hands the stream typed events
(recorder/event_stream.h). The crash record (recorder/flight_recorder.cpp) is written
without allocating, in signal context, and names only fixed identifiers: it needs no
escaper. No other file formats a \\u00XX escape (a second escaper).

Every violation is printed as file:line and what it includes; exit 1 if any.
"""
import os
import re
import sys

ORDER = {"catalog": 0, "symbols": 1, "recorder": 2, "policy": 3, "report": 4, "shim": 5, "tools": 5}
CUDA_HEADERS = re.compile(r'^\s*#\s*include\s*[<"](cuda\.h|cuda_runtime[a-z_]*\.h|cudaTypedefs\.h|shim/cuda_abi\.h)[>"]')
OURS = re.compile(r'^\s*#\s*include\s*"([a-z_]+)/[^"]+"')
SOURCES = (".h", ".hpp", ".cpp", ".cc", ".c", ".def", ".inc", ".S")
JSON_WRITERS = {"recorder", "report"}  # the layers that may write JSON
JSON_HEADERS = re.compile(r'^\s*#\s*include\s*"(recorder/json_writer\.h|recorder/library_json\.h)"')
ESCAPER = re.compile(r'\\\\u(\{:04x\}|%04x)')  # the text \\u{:04x} or \\u%04x in a source line
ESCAPER_HOME = "recorder/json_writer.cpp"


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
                    if JSON_HEADERS.match(line) and layer not in JSON_WRITERS:
                        yield f"{rel}:{n}: {layer}/ includes the JSON writer ({line.strip()}); only recorder/ and report/ write JSON"
                    if ESCAPER.search(line) and rel != ESCAPER_HOME:
                        yield f"{rel}:{n}: a JSON string escaper; {ESCAPER_HOME} holds the only one"
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
            "report/f.cpp": '#include "policy/ok.h"\n#include "recorder/json_writer.h"\n',  # fine
            "policy/g.cpp": '#include "recorder/json_writer.h"\n',  # policy/ writing JSON
            "shim/h.cpp": 'fmt::format_to(out, "\\\\u{:04x}", c);\n',  # a second escaper
            "recorder/json_writer.cpp": 'fmt::format_to(out, "\\\\u{:04x}", c);\n',  # the one
        }
        for rel, text in plant.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            open(os.path.join(root, rel), "w").write(text)
        got = sorted(v.split(":")[0] for v in violations(root))
        want = sorted(["catalog/CMakeLists.txt", "policy/b.cpp", "policy/e.cpp", "policy/g.cpp", "recorder/a.h",
                       "shim/h.cpp", "tools/c.cpp"])
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
