#!/usr/bin/env python3
"""check_live.py REPORT_DIR OUT_MD: what the live inventory and the module log said
about the torch + Triton job of gpu/run_live.sh. Judges: every CUDA library has a
version and says how it came in; no error-severity library finding (a real,
healthy install must not get a false error); device code loads are counted with
their time; a Triton-compiled kernel shows up as a load from a Triton launcher
module. Exit 1 when a check fails."""
import glob
import json
import os
import sys

rdir, out_md = sys.argv[1:3]
reps = [json.load(open(f)) for f in glob.glob(os.path.join(rdir, "cudashim-*.json"))]
main = max(reps, key=lambda r: r["modules"]["count"]) if reps else None
lines, fails = [], []
if main is None:
    fails.append("no report")
else:
    libs = main["libraries"]
    lines += ["| family | version (source) | linkage | how | loaded by | reason | file |", "|---|---|---|---|---|---|---|"]
    for l in libs:
        lines.append(f"| {l['family']} | {l['version']} ({l['version_source']}) | {l['linkage']} | {l['how']} | "
                     f"{os.path.basename(l['loaded_by'])} | {l['reason'][:90]} | {l['file']} |")
        if not l["version"]:
            fails.append(f"no version for {l['file']}")
    unexplained = [l["file"] for l in libs if not l["how"]]
    lines.append(f"\n- libraries: {len(libs)}; without a 'how': {len(unexplained)} {unexplained[:5]}")
    lines.append("\nLibrary findings:")
    for f in main["library_findings"]:
        lines.append(f"- [{f['severity']}] {f['id']}: {f['message'][:240]}")
        if f["severity"] == "error":
            fails.append(f"error finding on a healthy install: {f['id']}: {f['message'][:200]}")
    m = main["modules"]
    lines.append(f"\nModules: {m['count']} loads, {m['time_ns'] / 1e6:.1f} ms, {m['bytes'] / 2**20:.1f} MiB "
                 f"({m['sass_bytes'] / 2**20:.1f} MiB SASS, {m['sass_bytes_for_device'] / 2**20:.1f} MiB for this GPU), "
                 f"PTX JIT {m['ptx_jit_bytes']} B, failed {m['failed']}")
    lines += ["", "| calling module | loads | ms | MiB | PTX JIT bytes |", "|---|---:|---:|---:|---:|"]
    for c in sorted(m["by_caller"], key=lambda c: -c["time_ns"]):
        lines.append(f"| {c['module']} | {c['count']} | {c['time_ns'] / 1e6:.1f} | {c['bytes'] / 2**20:.2f} | {c['ptx_jit_bytes']} |")
    lines += ["", "Slowest loads:", "| api | caller | kind | coverage | archs | ms | bytes |", "|---|---|---|---|---|---:|---:|"]
    for s in m["slowest"]:
        lines.append(f"| {s['api']} | {os.path.basename(s['caller'])} | {s['kind']} | {s['coverage']} | {s['archs'][:40]} | "
                     f"{s['time_ns'] / 1e6:.2f} | {s['bytes']} |")
    t = m["triton"]
    if t["count"] == 0:
        fails.append("no load of a Triton-compiled kernel (torch.compile)")
    else:
        lines.append(f"\n- Triton-compiled kernels: {t['count']} loads in {t['time_ns'] / 1e6:.2f} ms "
                     f"(callers: {sorted({os.path.basename(s['caller']) for s in m['slowest'] if s['origin'] == 'triton'})})")
    if m["count"] == 0:
        fails.append("no module loads counted")
lines.append("\nVerdict: " + ("PASS" if not fails else "FAIL: " + "; ".join(fails)))
open(out_md, "a").write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(1 if fails else 0)
