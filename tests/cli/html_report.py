#!/usr/bin/env python3
"""html_report.py CLI SHIM FAKECUDA_DIR PROG: `cudashim report --html` on two ranks'
runs, loaded in headless Chromium: the page loads with no console error and needs
no network, and a screenshot shows the plots (memory over time, blocked time by call
site, ranks side by side). The screenshot is left in $CUDASHIM_HTML_SHOT if set."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

cli, shim, fake, prog = sys.argv[1:5]
chromium = shutil.which("chromium") or shutil.which("chromium-browser")
if not chromium:
    print("skipped: chromium is not installed (scripts/setup.sh installs it)")
    sys.exit(77)
errors = []
with tempfile.TemporaryDirectory() as out:
    for rank in (0, 1):
        env = dict(os.environ, RANK=str(rank), LD_LIBRARY_PATH=fake, CUDASHIM_LIB=shim, FAKECUDA_SYNC_DELAY_US=str(200 + 300 * rank),
                   CUDASHIM_LOG_LEVEL="error")
        subprocess.run([cli, "run", "--quiet", "--out", out, "--", prog, "explicit_sync"], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    page = os.path.join(out, "report.html")
    p = subprocess.run([cli, "report", "--html", page, out], capture_output=True, text=True)
    html = open(page).read()
    if p.returncode != 0 or html.count("<svg") < 4 or "<path d=\"M" not in html:
        errors.append(f"report --html: exit {p.returncode}, {html.count('<svg')} svg plots")
    if re.search(r"(src|href)=\"(https?:)?//", html):
        errors.append("the page references the network")
    shot = os.environ.get("CUDASHIM_HTML_SHOT") or os.path.join(out, "shot.png")
    c = subprocess.run([chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1000,1400", "--enable-logging=stderr", "--v=0", f"--screenshot={shot}",
                        "file://" + page], capture_output=True, text=True, timeout=120)
    console = [l for l in c.stderr.splitlines() if "CONSOLE" in l]
    if c.returncode != 0 or not os.path.exists(shot) or os.path.getsize(shot) < 20000:
        errors.append(f"chromium: exit {c.returncode}, screenshot {os.path.exists(shot) and os.path.getsize(shot)} bytes")
    if console:
        errors.append(f"console messages: {console[:3]}")
    for title in ("Device memory over time", "Blocked time by call site", "Ranks side by side", "Findings"):
        if title not in html:
            errors.append(f"no '{title}' section")
for e in errors:
    print("FAIL: " + e)
print("ok: the page loads headless with no console error, no network, and shows its plots" if not errors else "")
sys.exit(1 if errors else 0)
