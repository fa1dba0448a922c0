#!/usr/bin/env python3
"""native_lines.py CLI SHIM FAKECUDA_DIR PROG SOURCE SCHEMA: native call sites get file:line.

PROG (tests/progs/sync_lines.cpp, built with -g) is copied into a scratch folder and run
there under the shim through the test-double driver: a small device-to-host copy into
stack memory and a stream sync, 40 times, from a function that is not exported. Then
`cudashim report` must name SOURCE and the exact line of each call (the lines marked
`// LINE:sync` and `// LINE:copy`, found in the source, never written here) in --json,
in the summary and in --html. Then the binary is changed under the report:
 - stripped of debug info: the function and offset, and no line;
 - stripped of debug info but with a .gnu_debuglink to a separate debug file: the line again;
 - stripped of everything: the module and offset only;
 - replaced by another program (another build-id): "changed since the run", no line;
 - replaced by a script: the reason it cannot be read, naming the file;
 - deleted: "gone since the run", no line.
"""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

errors = []


def check(cond, what):
    if not cond:
        errors.append(what)
    return cond


def marked_line(source, marker):
    with open(source) as f:
        hits = [i for i, line in enumerate(f, 1) if line.rstrip().endswith(marker)]
    assert len(hits) == 1, f"{source}: expected one line marked {marker}, found {hits}"
    return hits[0]


def report_json(cli, out):
    p = subprocess.run([cli, "report", "--json", out], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise SystemExit(f"FAIL: cudashim report --json exited {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)["processes"][0]


def site_of(proc, finding_id):
    f = [x for x in proc["findings"] if x["id"] == finding_id]
    if not check(f and f[0]["sites"], f"no {finding_id} finding with a site: {[x['id'] for x in proc['findings']]}"):
        return None
    return f[0]["sites"][0]


def main():
    cli, shim, fake, prog, source, schema = sys.argv[1:7]
    source = os.path.realpath(source)
    want = {"sync.scalar-readback": marked_line(source, "// LINE:sync"),
            "copy.async-from-pageable": marked_line(source, "// LINE:copy")}
    with tempfile.TemporaryDirectory(prefix="cudashim-lines-") as tmp:
        exe = os.path.join(tmp, "sync_lines")
        shutil.copy2(prog, exe)
        pristine = os.path.join(tmp, "pristine")
        shutil.copy2(prog, pristine)
        out = os.path.join(tmp, "out")
        # Both floors at 0: the loop has no host work between its syncs, so each habit would save
        # only the host's own ~20 us a step, at the warning floor (sync.warn_min_saving_us), and
        # an info finding is counted in one summary line, its sites behind --verbose. This test is
        # about naming native lines, not about the price: both findings stay warnings.
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out,
                   FAKECUDA_SYNC_DELAY_US="200", CUDASHIM_LOG_LEVEL="error",
                   CUDASHIM_WARN_MIN_SAVING_US="0", CUDASHIM_WARN_MIN_STEP_SHARE="0")
        p = subprocess.run([exe], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print(f"FAIL: {exe} exited {p.returncode}: {p.stderr[-800:]}")
            return 1
        reports = [os.path.join(out, n) for n in os.listdir(out) if n.endswith(".json")]
        s = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "..", "hygiene",
                                                          "check_report_schema.py"), schema] + reports,
                           capture_output=True, text=True)
        check(s.returncode == 0, f"report does not match the schema: {s.stdout}")

        # 1. The binary as it ran: file:line of both calls, everywhere.
        proc = report_json(cli, out)
        for fid, line in want.items():
            site = site_of(proc, fid)
            if site is None:
                continue
            src = site.get("where_source") or {}
            frame = site.get("where_frame") or {}
            check(frame.get("file") == os.path.realpath(exe), f"{fid}: where_frame.file {frame.get('file')}, expected {exe}")
            check(src.get("status") == "line" and os.path.realpath(src.get("file") or "") == source and src.get("line") == line,
                  f"{fid}: resolved to {src}, expected {source}:{line}")
            check("read_loss(" in (src.get("function") or ""), f"{fid}: function {src.get('function')}, expected read_loss")
            print(f"{fid}: recorded where '{site['where']}' -> '{src.get('text')}'")
        # The file as the line table names it (the same file as SOURCE, checked above).
        named = ((site_of(proc, "sync.scalar-readback") or {}).get("where_source") or {}).get("file") or source
        summary = subprocess.run([cli, "report", out], capture_output=True, text=True, timeout=120).stdout
        check(f"{named}:{want['sync.scalar-readback']} (" in summary,
              f"summary does not name {named}:{want['sync.scalar-readback']}:\n{summary}")
        page = os.path.join(tmp, "r.html")
        subprocess.run([cli, "report", "--html", page, out], capture_output=True, text=True, timeout=120)
        with open(page) as f:
            text = html.unescape(f.read())
        check(f"{named}:{want['sync.scalar-readback']} (" in text, "the HTML page does not show the sync's file:line")

        def where(step):
            site = site_of(report_json(cli, out), "sync.scalar-readback")
            src = (site or {}).get("where_source") or {}
            print(f"{step}: {src.get('status')}: {src.get('text')}")
            return src

        # 2. Debug info stripped (build-id kept): the function and offset, no line.
        subprocess.run(["strip", "--strip-debug", exe], check=True)
        src = where("strip --strip-debug")
        check(src.get("line") is None and re.fullmatch(
            r"sync_lines!\(anonymous namespace\)::read_loss\(void\*, CUstream_st\*, float\*\)\+0x[0-9a-f]+ \(no debug info\)",
            src.get("text", "")), f"stripped of debug info: {src}")
        # 3. The same, with a .gnu_debuglink to the debug info kept apart: the line again.
        subprocess.run(["objcopy", "--only-keep-debug", pristine, os.path.join(tmp, "sync_lines.debug")], check=True)
        subprocess.run(["objcopy", "--add-gnu-debuglink=" + os.path.join(tmp, "sync_lines.debug"), exe], check=True)
        src = where("debuglink")
        check(src.get("line") == want["sync.scalar-readback"] and src.get("debug_file", "").endswith("sync_lines.debug"),
              f"with .gnu_debuglink: {src}")
        # 4. Stripped of everything: no symbol names the function; module and offset.
        subprocess.run(["strip", "--strip-all", exe], check=True)
        os.remove(os.path.join(tmp, "sync_lines.debug"))
        src = where("strip --strip-all")
        check(src.get("function") is None and re.fullmatch(r"sync_lines\+0x[0-9a-f]+ \(no debug info\)", src.get("text", "")),
              f"fully stripped: {src}")
        # 5. Another program in its place: another build-id, so no line rather than a wrong one.
        shutil.copy2(shutil.which("true") or "/bin/true", exe)
        src = where("replaced")
        check(src.get("status") == "changed" and src.get("line") is None and "changed since the run" in src.get("text", ""),
              f"replaced by another program: {src}")
        # 6. Not an ELF file any more: the reason, naming the file.
        with open(exe, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        src = where("not ELF")
        check(src.get("status") == "unreadable" and exe in src.get("text", "") and "not an ELF file" in src.get("text", ""),
              f"replaced by a script: {src}")
        # 7. Gone.
        os.remove(exe)
        src = where("deleted")
        check(src.get("status") == "missing" and "gone since the run" in src.get("text", ""), f"deleted: {src}")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: both call sites resolved to their source lines; stripped, relinked, replaced and deleted binaries "
              "give what they can and never a wrong line")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
