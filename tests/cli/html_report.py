#!/usr/bin/env python3
"""html_report.py CLI SHIM FAKECUDA_DIR PROG FIXTURE_DIR GPU_TIME_PROG: `cudashim report --html` rendered in
headless Chromium, after its script ran (--dump-dom), checked element by element against
the reports it was made from, and a screenshot checked for its size and for content.

The page is made from two ranks' runs of PROG (explicit_sync: findings with sites, memory
over time from their event streams), the saved CUDASHIM_MEM_CAP=10MiB run of
tests/cli/summary_fixture (out-of-memory events, leaks by site, libraries with reasons, the
policy) and its SIGSEGV flight record with a backtrace, and a 3.5 s run of GPU_TIME_PROG
(tests/progs/gpu_time.cpp) whose sampler read the NVML double under a power cap (sw_power_cap):
its stream's gpu_health lines. Checked (issue 21): what ran (the
command line of each process); every site of every finding, each row naming its process;
the memory chart as a step chart (one path per process and device, only horizontal and
vertical moves) whose axis reaches the report's true peak, drawn as a line with that figure;
a time axis that zooms (page.html#zoom=A,B); the out-of-memory counts; the backtrace; the
GPU-time diagnosis of the sampled run; the GPU's health over time (issue 20): a line per
health panel carrying the stream's values (SM clock, power against its limit, temperature,
memory used), the throttled samples marked with their reason, on the memory chart's time axis
(its zoom moves both); no network reference; no console error. The screenshot is left in
$CUDASHIM_HTML_SHOT when set."""
import html as htmllib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

cli, shim, fake, prog, fixture, gpu_prog = sys.argv[1:7]
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("skipped: chromium is not installed (scripts/setup.sh --tests installs it)")
    sys.exit(77)
WIDTH, HEIGHT = 1280, 2000
errors = []


def browser(args, timeout=120):
    return subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--enable-logging=stderr", "--v=0"] + args, capture_output=True, text=True, timeout=timeout)


def png_pixels(path):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB or RGBA PNG (zlib and the 5 filters)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} colour type {ctype}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, rows = zlib.decompress(idat), w * bpp, bytearray(w * bpp), []
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        prev = line
    return w, h, rows, bpp


with tempfile.TemporaryDirectory() as out:
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim,
                   FAKECUDA_SYNC_DELAY_US=str(200 + 300 * rank), CUDASHIM_LOG_LEVEL="error")
        subprocess.run([cli, "run", "--quiet", "--out", out, "--", prog, "explicit_sync"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    # The GPU's health over time: the NVML double's scripted device (SM 1980 MHz, 300 W of a 700 W limit)
    # held down by a power cap, sampled about once a second for 3.5 s.
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, CUDASHIM_LOG_LEVEL="error",
               FAKENVML_UTIL_PCT="95", FAKENVML_CLOCK_EVENT_REASONS="0x4", GPU_TIME_SECONDS="3.5")
    before = set(os.listdir(out))  # the ranks' streams have a health line or two of their own
    subprocess.run([cli, "run", "--quiet", "--out", out, "--", gpu_prog, "host_bound"], env=env, check=True,
                   stdout=subprocess.DEVNULL)
    health = [json.loads(l) for f in sorted(set(os.listdir(out)) - before) if f.endswith(".ndjson")
              for l in open(os.path.join(out, f)) if '"gpu_health"' in l]
    for f in ("cudashim-vm-12529.json", "cudashim-vm-12529.ndjson", "cudashim-vm-12600-crash.json"):
        shutil.copy(os.path.join(fixture, "saved-" + f), os.path.join(out, f))
        os.chmod(os.path.join(out, f), 0o600)
    # One note with nothing to do, as every torch run on the H200 has (Triton's toolchain).
    capped = os.path.join(out, "cudashim-vm-12529.json")
    rep = json.load(open(capped))
    rep["library_findings"] = rep.get("library_findings", []) + [
        {"id": "triton.toolchain", "severity": "info", "message": "Triton 3.6.0 at /nonexistent/triton",
         "fix": "Nothing to do."}]
    # A waiter's site, as a JAX loop's jax.device_get(loss) has (docs/python.md): samples, no blocked time.
    rank0 = json.load(open(next(os.path.join(out, f) for f in sorted(os.listdir(out))
                                if f.endswith(".json") and f != os.path.basename(capped) and "-crash" not in f)))
    waiter = dict(rank0["findings"][0]["sites"][0], where="train.py:62 (<module>)", count=82, steps=82, blocked_ns=0,
                  sampled=True, python=["train.py:62 (<module>)"], gpu_idle_after_ns=0, gpu_idle_after_count=0,
                  where_frame=None)
    rep["findings"] = rep.get("findings", []) + [
        dict(rank0["findings"][0], id="sync.scalar-readback", severity="warning", count=82, blocked_ns=0,
             sites=[waiter])]
    json.dump(rep, open(capped, "w"))
    reports = [json.load(open(os.path.join(out, f))) for f in sorted(os.listdir(out))
               if f.endswith(".json") and not f.endswith("-crash.json")]
    page = os.path.join(out, "report.html")
    p = subprocess.run([cli, "report", "--html", page, out], capture_output=True, text=True)
    src = open(page).read() if os.path.exists(page) else ""
    if p.returncode != 0 or not src:
        errors.append(f"report --html: exit {p.returncode}: {p.stderr[-400:]}")
    if re.search(r"(src|href)=\"(https?:)?//", src) or "http://" in src.replace("http://www.w3.org/2000/svg", ""):
        errors.append("the page references the network")
    d = browser(["--dump-dom", "file://" + page])
    dom = d.stdout
    console = [l for l in d.stderr.splitlines() if "CONSOLE" in l]
    if console:
        errors.append(f"console messages: {console[:3]}")
    if 'data-rendered="yes"' not in dom:
        errors.append("the page's script did not run to its end")
    # What ran: each process's command line.
    for r in reports:
        cmd = " ".join(r["process"]["argv"])
        if htmllib.escape(cmd, quote=False) not in dom:
            errors.append(f"no command line '{cmd}' on the page")
    # Every site of every finding, named by its process.
    want_sites = sum(max(1, len(f["sites"])) for r in reports for f in r["findings"])
    site_rows = re.findall(r'<tr class="site" data-pid="(\d+)"', dom)
    pids = {str(r["process"]["pid"]) for r in reports}
    if len(site_rows) != want_sites or not set(site_rows) <= pids or want_sites == 0:
        errors.append(f"{len(site_rows)} finding-site rows (pids {set(site_rows)}), expected {want_sites} from {pids}")
    # A waiter's site says its count is samples and that it has no blocked time.
    sampled_rows = re.findall(r'<tr class="site"[^>]*data-sampled="1"[^>]*>(.*?)</tr>', dom)
    if len(sampled_rows) != 1 or ">82 samples<" not in sampled_rows[0] or "sampled, not timed" not in sampled_rows[0]:
        errors.append(f"the waiter's site row does not say '82 samples' and 'sampled, not timed': {sampled_rows}")
    # Beside each site's blocked time, the GPU idle its drains left (reports that carry it), in the page and
    # in the text summary.
    want_idle = sorted(round(s["gpu_idle_after_ns"] / 1e6, 3) for r in reports for f in r["findings"] for s in f["sites"]
                       if "gpu_idle_after_ns" in s)
    got_idle = sorted(float(v) for v in re.findall(r'<tr class="site"[^>]*data-idle-after-ms="([0-9.]+)"', dom))
    if not want_idle or got_idle != want_idle:
        errors.append(f"GPU idle after per site: page {got_idle}, reports {want_idle}")
    if "GPU idle after, per step" not in p.stdout:
        errors.append(f"the text summary shows no GPU idle per step: {p.stdout[-600:]}")
    # The memory chart: steps, true peaks, an axis that reaches them.
    steps = re.findall(r'<path d="([^"]*)"[^>]*class="step"', dom)
    peaks = sorted(float(v) for v in re.findall(r'class="peak" data-peak-mib="([0-9.]+)"', dom))
    want_peaks = sorted(round(d_["peak_bytes"] / 1048576, 1) for r in reports for d_ in r["memory"]["devices"])
    if len(steps) != 4 or any(re.search(r"[LCQA]", s_) for s_ in steps):
        errors.append(f"expected 4 step paths (M/H/V only), got {steps[:4]}")
    if peaks != want_peaks:
        errors.append(f"peak lines {peaks}, the reports' peaks are {want_peaks}")
    ymax = re.search(r'id="memsvg"[^>]*data-ymax-mib="([0-9.]+)"', dom)
    if not ymax or float(ymax.group(1)) < max(want_peaks or [0]):
        errors.append(f"the memory axis tops at {ymax and ymax.group(1)} MiB, below the peak {max(want_peaks or [0])}")
    # Zoom: the page opened at #zoom=A,B shows that window of the time axis.
    z = browser(["--dump-dom", "file://" + page + "#zoom=0.001,0.004"]).stdout
    if 'data-view="0.001,0.004"' not in z:
        errors.append(f"zoom: {re.findall(r'data-view=.[0-9.,]+.', z)}")
    if not re.search(r'id="healthsvg"[^>]*data-view="0.001,0.004"', z):
        errors.append(f"zoom: the health chart is not on the memory chart's zoomed axis: {re.findall(r'data-view=.[0-9.,]+.', z)}")
    # Out of memory, the crash, the libraries, the place for GPU time.
    if not re.search(r'class="oom" data-pid="12529" data-count="5" data-denied="5"', dom):
        errors.append("no out-of-memory counts of the capped run")
    if '<table class="backtrace">' not in dom or "SIGSEGV" not in dom:
        errors.append("no crash with its backtrace")
    if "in LD_LIBRARY_PATH" not in dom or 'id="libraries-table"' not in dom:
        errors.append("no library inventory with its reasons")
    # The frameworks column says in words what the torch counters' state means.
    if re.search(r"<td>[^<]*\b(no_python|no_torch|torch_cuda_not_initialized)\b", dom) or "not a Python process" not in dom:
        errors.append("the frameworks column shows a raw torch_memory.state instead of words")
    # The findings card counts warnings, and the notes apart (two info findings read as "2 findings" on the H200 page).
    sev = [f.get("severity") for r in reports for f in r.get("findings", []) + r.get("library_findings", [])]
    warned, noted = sum(1 for x in sev if x != "info"), sum(1 for x in sev if x == "info")
    want_card = f'<b>{warned}</b><span>warnings{f", and {noted} info" if noted else ""}</span>'
    if f'id="card-findings">{want_card}' not in dom:
        errors.append(f"the findings card is not {want_card!r} (reports: {warned} warnings, {noted} info): "
                      f"{re.findall(r'id=.card-findings.>(.*?)</div>', dom)}")
    if 'id="gpu-time-table"' not in dom:
        errors.append("no GPU-time diagnosis of the sampled run")
    # Each row names its process once, as every other table does ("pid 890 (pid 890 (python3.12))" was seen).
    gpu_rows = re.findall(r'<tr data-pid="(\d+)" data-device="\d+" data-idle="[^"]*"><td>([^<]*)</td>', dom)
    if not gpu_rows or any(cell.count(f"pid {pid}") != 1 or not cell.startswith(("pid ", "rank ")) for pid, cell in gpu_rows):
        errors.append(f"GPU-time rows name their process {gpu_rows}, expected 'pid N (exe)' once each")
    # The GPU's health over time, drawn from the stream's gpu_health lines.
    if len(health) < 2:
        errors.append(f"the sampled run's stream has {len(health)} gpu_health lines, expected 2 or more")
    data = re.search(r'<script type="application/json" id="cudashim-data">(.*?)</script>', dom, re.S)
    series = json.loads(data.group(1).replace("<\\/", "</"))["gpu_health"] if data else []
    sampled = [s for s in series if "(gpu_time)" in s["label"]]
    if len(sampled) != 1 or len(sampled[0]["t"]) != len(health):
        errors.append(f"health series {[(s['label'], len(s['t'])) for s in series]}, the stream has {len(health)} lines")
    else:
        s = sampled[0]
        want = {"sm_mhz": [h["sm_mhz"] for h in health], "power_w": [h["power_mw"] / 1000 for h in health],
                "limit_w": [h["power_limit_mw"] / 1000 for h in health], "temp_c": [h["temp_c"] for h in health],
                "mem_used_gib": [h["mem_used_bytes"] / 2**30 for h in health]}
        for k, v in want.items():
            if [round(x, 6) for x in s[k]] != [round(x, 6) for x in v]:
                errors.append(f"health {k}: page {s[k][:3]}, stream {v[:3]}")
        if s["sm_mhz"][0] != 1980 or s["limit_w"][0] != 700:
            errors.append(f"health: SM {s['sm_mhz'][0]} MHz, limit {s['limit_w'][0]} W; the double gives 1980 and 700")
    keys = set(re.findall(r'<path d="M[^"]*"[^>]*class="health-line" data-key="(\w+)"', dom))
    if keys != {"sm_mhz", "mem_mhz", "power_w", "limit_w", "temp_c", "mem_used_gib"}:
        errors.append(f"health lines drawn: {sorted(keys)}")
    throttled = re.findall(r'class="throttle" data-reasons="([^"]*)"', dom)
    if len(throttled) != len(health) or set(throttled) != {"sw_power_cap"}:
        errors.append(f"throttle marks {throttled[:3]} ({len(throttled)}), expected one sw_power_cap per sample "
                      f"of the capped run ({len(health)}), none for the ranks'")
    # The screenshot: the window's size, and content (not one colour).
    shot = os.environ.get("CUDASHIM_HTML_SHOT") or os.path.join(out, "shot.png")
    c = browser([f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", "file://" + page])
    if c.returncode != 0 or not os.path.exists(shot):
        errors.append(f"chromium --screenshot: exit {c.returncode}")
    else:
        w, h, rows, bpp = png_pixels(shot)
        sample = [bytes(row[x * bpp:x * bpp + 3]) for row in rows[::8] for x in range(0, w, 8)]
        inked = sum(1 for px in sample if px != b"\xff\xff\xff") / len(sample)
        colours = len(set(sample))
        if (w, h) != (WIDTH, HEIGHT) or inked < 0.02 or colours < 8:
            errors.append(f"screenshot {w}x{h}, {inked:.1%} not white, {colours} colours")
        print(f"screenshot {w}x{h}: {inked:.1%} of the sampled pixels not white, {colours} colours")
    print(f"{len(site_rows)} site rows, peaks {peaks} MiB, axis to {ymax and ymax.group(1)} MiB")
for e in errors:
    print("FAIL: " + e)
print("ok: the page, after its script ran, shows what the reports hold" if not errors else "")
sys.exit(1 if errors else 0)
