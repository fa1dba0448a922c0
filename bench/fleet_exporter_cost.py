#!/usr/bin/env python3
"""fleet_exporter_cost.py CLI SHIM FAKECUDA_DIR SYNC_RULES [SECONDS] [RECORDS]: what `cudashim exporter`
costs on a node with RECORDS (64) processes, scraped once a second for SECONDS (30).

One real record (tests/progs/sync_rules under the shim) is re-sealed for RECORDS live processes
(`sleep`, each with its own pid and start time, so the exporter serves them as running and reaps
none); the exporter serves them on loopback and is scraped every second. Its CPU time comes
from /proc/<pid>/stat (utime + stime) over the window; its memory is VmHWM and VmRSS. Prints a
Markdown table (bench/results/fleet_exporter_cost-cpu.md). The budget (issue 34): 0.1 core, 50 MiB.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

SIZE, OFF_PID, OFF_START, OFF_CHECKSUM = 3768, 20, 32, 3760


def fnv(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def start_of(pid):
    text = open(f"/proc/{pid}/stat").read()
    return int(text[text.rfind(")") + 2:].split()[19])


def cpu_s(pid):
    f = open(f"/proc/{pid}/stat").read()
    parts = f[f.rfind(")") + 2:].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


def status_kib(pid, key):
    m = re.search(rf"^{key}:\s+(\d+) kB", open(f"/proc/{pid}/status").read(), re.M)
    return int(m.group(1))


def main():
    cli, shim, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
    seconds = int(sys.argv[5]) if len(sys.argv) > 5 else 30
    count = int(sys.argv[6]) if len(sys.argv) > 6 else 64
    sleepers = []
    with tempfile.TemporaryDirectory() as tmp:
        fleet = os.path.join(tmp, "fleet")
        os.mkdir(fleet)
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=tmp, CUDASHIM_FLEET_DIR=fleet,
                   CUDASHIM_SUMMARY="0")
        subprocess.run([prog, "readback"], env=env, check=True, capture_output=True)
        (name,) = os.listdir(fleet)
        good = open(os.path.join(fleet, name), "rb").read()
        os.unlink(os.path.join(fleet, name))
        assert len(good) == SIZE
        for _ in range(count):
            s = subprocess.Popen(["sleep", str(seconds + 30)])
            sleepers.append(s)
            b = bytearray(good)
            struct.pack_into("<i", b, OFF_PID, s.pid)
            struct.pack_into("<Q", b, OFF_START, start_of(s.pid))
            struct.pack_into("<Q", b, OFF_CHECKSUM, fnv(bytes(b[:OFF_CHECKSUM])))
            with open(os.path.join(fleet, f"{s.pid}-{start_of(s.pid)}.rec"), "wb") as f:
                f.write(b)
        exp = subprocess.Popen([cli, "exporter", "--dir", fleet, "--listen", "127.0.0.1", "--port", "0"],
                               stderr=subprocess.PIPE, text=True)
        port = int(re.search(r":(\d+)/metrics", exp.stderr.readline()).group(1))
        scrape = lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        body = scrape()
        served = int(re.search(rb"cudashim_exporter_records (\d+)", body).group(1))
        c0, t0 = cpu_s(exp.pid), time.monotonic()
        n = 0
        for i in range(seconds):
            scrape()
            n += 1
            time.sleep(max(0.0, t0 + i + 1 - time.monotonic()))
        c1, t1 = cpu_s(exp.pid), time.monotonic()
        hwm, rss = status_kib(exp.pid, "VmHWM"), status_kib(exp.pid, "VmRSS")
        exp.terminate()
        exp.wait()
        for s in sleepers:
            s.kill()
            s.wait()
    core = (c1 - c0) / (t1 - t0)
    print(f"| records served | scrapes | wall (s) | exporter CPU (s) | CPU share (cores) | VmHWM (MiB) | VmRSS (MiB) | exposition (KiB) |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {served} | {n} | {t1 - t0:.1f} | {c1 - c0:.2f} | {core:.4f} | {hwm / 1024:.1f} | {rss / 1024:.1f} | {len(body) / 1024:.0f} |")
    ok = served == count and core <= 0.1 and hwm <= 50 * 1024
    print(f"\nbudget (0.1 core, 50 MiB): {'within' if ok else 'OVER'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
