#!/usr/bin/env python3
"""hostile_records.py CLI SHIM FAKECUDA_DIR SYNC_RULES: `cudashim exporter` against a hostile runtime folder.

One good record (a test-double program run under the shim) sits among files that are cut,
of another magic, of a newer version, with absurd values (a blocked time of 2^63 ns, shares that
do not add up, a label with no NUL), with a bad checksum, named for another pid, a symbolic
link, a FIFO, a folder, random bytes, and (as root) a file of another uid and a record that
claims a process of another user. The exporter must serve the good record's series and no
value of a bad one, name each bad file once on stderr with its reason (a second scrape says
nothing new), and keep serving; promtool must accept what it serves.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request

SIZE = 3768            # sizeof(FleetRecord) (catalog/fleet_record.h)
OFF_VERSION, OFF_PID, OFF_UID, OFF_START = 8, 20, 24, 32
OFF_EXE, OFF_VALUES, OFF_DEVICES = 56, 560, 816
DEVICE_SIZE, OFF_CHECKSUM = 152, SIZE - 8


def fnv(data):
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def sealed(b):
    b = bytearray(b)
    b[OFF_CHECKSUM:] = struct.pack("<Q", fnv(bytes(b[:OFF_CHECKSUM])))
    return bytes(b)


def patch(b, off, fmt, value, reseal=True):
    b = bytearray(b)
    struct.pack_into(fmt, b, off, value)
    return sealed(b) if reseal else bytes(b)


def start_of(pid):
    text = open(f"/proc/{pid}/stat").read()
    return int(text[text.rfind(")") + 2:].split()[19])


def main():
    cli, shim, fake, prog = (os.path.abspath(a) for a in sys.argv[1:5])
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        fleet, out = os.path.join(tmp, "fleet"), os.path.join(tmp, "out")
        os.mkdir(fleet), os.mkdir(out)
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out, CUDASHIM_FLEET_DIR=fleet,
                   CUDASHIM_SUMMARY="0")
        subprocess.run([prog, "readback"], env=env, check=True, capture_output=True, timeout=60)
        (good_name,) = os.listdir(fleet)
        good = open(os.path.join(fleet, good_name), "rb").read()
        assert len(good) == SIZE, f"the record is {len(good)} bytes, this test knows {SIZE}: update it"
        pid = struct.unpack_from("<i", good, OFF_PID)[0]
        bad = {  # file name -> (bytes, what the exporter must say)
            "1-1.rec": (good[:100], "truncated"),
            "2-1.rec": (b"NOTFLEET" + good[8:], "wrong magic"),
            "3-1.rec": (patch(good, OFF_VERSION, "<I", 2, reseal=False), "newer cudashim"),
            "4-1.rec": (patch(good, OFF_VALUES + 8, "<Q", 1 << 63), "absurd values"),
            "5-1.rec": (patch(patch(good, OFF_DEVICES + 4, "<I", 1), OFF_DEVICES + 112, "<Q", 500000), "do not add up"),
            "6-1.rec": (sealed(good[:OFF_EXE] + b"A" * 64 + good[OFF_EXE + 64:]), "not NUL-terminated"),
            "7-1.rec": (patch(good, OFF_VALUES + 8, "<Q", 12345, reseal=False), "checksum mismatch"),
            "999999-1.rec": (good, "does not match its pid"),
            "8-1.rec": (os.urandom(SIZE), "wrong magic"),
            "9-1.rec": (good + b"x", "too long"),
        }
        for name, (data, _) in bad.items():
            with open(os.path.join(fleet, name), "wb") as f:
                f.write(data)
        os.symlink(os.path.join(fleet, good_name), os.path.join(fleet, "10-1.rec"))
        bad["10-1.rec"] = (None, "symbolic link")
        os.mkfifo(os.path.join(fleet, "11-1.rec"))
        bad["11-1.rec"] = (None, "not a regular file")
        os.mkdir(os.path.join(fleet, "12-1.rec"))
        bad["12-1.rec"] = (None, "not a regular file")
        if os.getuid() == 0:  # files of another user (chown needs root)
            other = os.path.join(fleet, "13-1.rec")
            shutil.copy(os.path.join(fleet, good_name), other)
            os.chown(other, 12345, 12345)
            bad["13-1.rec"] = (None, "owned by uid 12345")
            # a record of uid 12345 that claims pid 1 (root's, alive): never served
            claim = patch(patch(patch(good, OFF_UID, "<I", 12345), OFF_PID, "<i", 1), OFF_START, "<Q", start_of(1))
            name = f"1-{start_of(1)}.rec"
            with open(os.path.join(fleet, name), "wb") as f:
                f.write(claim)
            os.chown(os.path.join(fleet, name), 12345, 12345)
            bad[name] = (None, "pid 1 belongs to uid 0")
        else:
            print("note: not root: the other-uid cases are not run")

        exp = subprocess.Popen([cli, "exporter", "--dir", fleet, "--listen", "127.0.0.1", "--port", "0",
                                "--keep-exited", "600"], stderr=subprocess.PIPE, text=True)
        try:
            m = re.search(r":(\d+)/metrics", exp.stderr.readline())
            port = int(m.group(1))
            scrape = lambda: urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
            first = scrape()
            second = scrape()
            if exp.poll() is not None:
                errors.append(f"the exporter ended ({exp.returncode}) after two scrapes")
        finally:
            exp.terminate()
            _, err = exp.communicate(timeout=10)
        lines = err.splitlines()
        for name, (_, reason) in bad.items():
            said = [l for l in lines if f"/{name}:" in l]
            if len(said) != 1 or reason not in said[0]:
                errors.append(f"{name}: expected one line saying '{reason}', got {said}")
        for text in (first, second):
            if "cudashim_exporter_records 1\n" not in text:
                errors.append("the exporter does not serve exactly the good record")
            if f"cudashim_exporter_skipped_records {len(bad)}\n" not in text:
                errors.append(f"skipped count is not {len(bad)}: {re.findall('skipped_records .*', text)}")
            pids = set(re.findall(r'pid="(\d+)"', text))
            if pids != {str(pid)}:
                errors.append(f"series of pids {pids} served; only {pid} is a good record")
            if "9.223372036854776e+09" in text or "12345" in re.sub(r"uid \d+", "", text):
                errors.append("a bad record's value was served")
        p = subprocess.run([os.path.join(os.path.dirname(cli), "cudashim"), "exporter", "--dir", fleet, "--once"],
                           capture_output=True, text=True)
        if p.returncode != 0 or "cudashim_exporter_records 1" not in p.stdout:
            errors.append(f"--once: exit {p.returncode}: {p.stderr[-500:]}")
    for e in errors:
        print("FAIL:", e)
    if not errors:
        print(f"ok: {len(bad)} hostile files named once each and skipped; the good record served")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
