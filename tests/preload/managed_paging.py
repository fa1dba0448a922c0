#!/usr/bin/env python3
"""managed_paging.py SHIM FAKECUDA_DIR PROG SOURCE SCHEMA: managed memory over the bus, from NVML's
PCIe throughput, through the NVML double (tests/progs/managed_paging.cpp).

1. paging: a 64 MiB managed buffer touched by host and GPU in turn while the double reports
   400 MB/s RX and 200 MB/s TX: the report's managed_memory section has device 0 with
   estimated bytes each way near rate x time (an estimate, copies included), its one site at
   the allocation's line (SOURCE's `// LINE:managed`; the shim's own report names a native site
   module+offset, which addr2line turns into the line, as `cudashim report` would from the
   frame), and memory.managed-paging fires there,
   its fix naming that line; the PCIe readings came from the flush thread only; the report
   matches SCHEMA.
2. quiet: the same program with no PCIe traffic: readings, no finding.
3. device: the same traffic with a cudaMalloc buffer: no managed memory, so NVML's PCIe
   throughput is never read and there is nothing to report.
4. two_sites: two managed buffers (48 and 16 MiB) live together: both sites are "shared",
   the traffic split 3:1 by their live bytes, the finding names the larger one first.
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

shim, fake, prog, source, schema = sys.argv[1:6]
errors = []
env0 = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_LOG_LEVEL="error",
            FAKENVML_UTIL_PCT="50")
here = os.path.dirname(os.path.abspath(__file__))


def marked_line(marker):
    with open(source) as f:
        hits = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"{source}: expected one line marked {marker}, found {hits}"
    return f"{os.path.basename(source)}:{hits[0]}"


def line_of(where):
    """file:line of a site's `where`: as given, or from PROG+0xOFFSET through addr2line (the
    return address minus one: the call's own line)."""
    where = where or ""
    base = os.path.basename(prog) + "+0x"
    if base not in where:
        return where
    off = int(where.split(base, 1)[1].split()[0].rstrip(","), 16)
    out = subprocess.run(["addr2line", "-e", prog, hex(off - 1)], capture_output=True, text=True).stdout.strip()
    return f"{os.path.basename(out.split(' ')[0].rsplit(':', 1)[0])}:{out.split(' ')[0].rsplit(':', 1)[-1]}" if out else where


def run(mode, **extra):
    out = tempfile.mkdtemp()
    env = dict(env0, CUDASHIM_OUT=out, **extra)
    p = subprocess.run([prog, mode], env=env, capture_output=True, text=True, timeout=60)
    reports = [f for f in glob.glob(os.path.join(out, "*.json")) if not f.endswith("-crash.json")]
    report = json.load(open(reports[0])) if reports else None
    if p.returncode != 0 or report is None:
        errors.append(f"{mode}: exit {p.returncode}, no report: {p.stderr[-300:]}")
    return p, report, reports[0] if reports else None


def section(report):
    return (report or {}).get("managed_memory") or {"devices": [], "findings": []}


def near(x, want, tol):
    return want * (1 - tol) <= x <= want * (1 + tol)


RX, TX = 400000, 200000  # KB/s, as NVML reports them
line = marked_line("// LINE:managed")

# 1. paging
p, report, path = run("paging", FAKENVML_PCIE_RX_KBPS=str(RX), FAKENVML_PCIE_TX_KBPS=str(TX), MANAGED_SECONDS="5.5")
m = section(report)
if report:
    d = m["devices"][0] if m["devices"] else None
    if not d or d["device"] != 0 or not d["estimate"] or d["samples"] < 3 or not d["copies_included"]:
        errors.append(f"paging: devices {m['devices']}")
    else:
        secs = d["managed_ns"] / 1e9
        if not (near(d["est_htod_bytes"], RX * 1024 * secs, 0.02) and near(d["est_dtoh_bytes"], TX * 1024 * secs, 0.02)):
            errors.append(f"paging: estimated bytes {d['est_htod_bytes']} / {d['est_dtoh_bytes']} over {secs:.2f} s")
        if d["window"]["kind"] != "steady" or d["paging_samples"] < 3 or d["paging_share"] < 0.5:
            errors.append(f"paging: window {d['window']}, paging {d['paging_samples']} readings, share {d['paging_share']}")
        sites = d["sites"]
        if len(sites) != 1 or line_of(sites[0]["where"]) != line or sites[0]["shared"] or \
                sites[0]["live_bytes_max"] != 64 << 20 or sites[0]["api"] != "cudaMallocManaged":
            errors.append(f"paging: sites {sites}, want one at {line}")
        print(f"paging: {d['samples']} readings over {secs:.1f} s, est {d['est_htod_bytes'] >> 20} MiB HtoD, "
              f"{d['est_dtoh_bytes'] >> 20} MiB DtoH, paging share {d['paging_share']}, "
              f"site {line_of(sites[0]['where']) if sites else None}")
    f = m["findings"]
    if [x["id"] for x in f] != ["memory.managed-paging"] or not f[0]["fix"].startswith(f[0]["sites"][0]["where"] + ": ") or \
            "cudaMemPrefetchAsync" not in f[0]["fix"] or line_of(f[0]["sites"][0]["where"]) != line or not f[0]["estimate"]:
        errors.append(f"paging: findings {f}")
    else:
        print(f"paging: {f[0]['id']} at {line_of(f[0]['sites'][0]['where'])} ({f[0]['sites'][0]['where']})")
    chk = subprocess.run([sys.executable, os.path.join(here, "..", "hygiene", "check_report_schema.py"), schema, path],
                         capture_output=True, text=True)
    if chk.returncode != 0:
        errors.append(f"paging: the report does not match docs/report-schema.md: {chk.stdout[-600:]}")

# 2. no traffic
p, report, _ = run("paging", MANAGED_SECONDS="4.5")
m = section(report)
if report and (not m["devices"] or m["devices"][0]["samples"] < 2 or m["devices"][0]["est_htod_bytes"] != 0 or m["findings"]):
    errors.append(f"quiet: devices {m['devices']}, findings {m['findings']}")
elif report:
    print(f"quiet: {m['devices'][0]['samples']} readings, no traffic, no finding")

# 3. no managed memory
p, report, _ = run("device", FAKENVML_PCIE_RX_KBPS=str(RX), FAKENVML_PCIE_TX_KBPS=str(TX), MANAGED_SECONDS="4.5")
m = section(report)
if report and (m["devices"] or m["findings"]):
    errors.append(f"device: devices {m['devices']}, findings {m['findings']}")
elif report:
    print("device: no managed memory, PCIe never read, nothing reported")

# 4. two sites live together
p, report, _ = run("two_sites", FAKENVML_PCIE_RX_KBPS=str(RX), FAKENVML_PCIE_TX_KBPS=str(TX), MANAGED_SECONDS="5.5")
m = section(report)
if report:
    big, small = marked_line("// LINE:big"), marked_line("// LINE:small")
    sites = m["devices"][0]["sites"] if m["devices"] else []
    wheres = [line_of(s["where"]) for s in sites]
    if len(sites) != 2 or wheres != [big, small] or not all(s["shared"] for s in sites) or \
            not near(sites[0]["est_htod_bytes"], 3 * sites[1]["est_htod_bytes"], 0.01):
        errors.append(f"two_sites: sites {sites}, want {big} then {small}, shared, 3:1")
    elif not m["findings"] or not m["findings"][0]["fix"].startswith(sites[0]["where"] + ": ") or \
            len(m["findings"][0]["sites"]) != 2:
        errors.append(f"two_sites: findings {m['findings']}")
    else:
        print(f"two_sites: shared 3:1, {sites[0]['est_htod_bytes'] >> 20} and {sites[1]['est_htod_bytes'] >> 20} MiB HtoD")

for e in errors:
    print("FAIL: " + e)
print("ok: managed memory over the bus, estimated per site, and its finding" if not errors else "")
sys.exit(1 if errors else 0)
