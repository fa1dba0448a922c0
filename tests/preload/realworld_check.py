#!/usr/bin/env python3
"""realworld_check.py CLI BUILD_DIR FAKECUDA_DIR CUDART: gpu/realworld/check.py scores real reports.

The GPU corpus only runs on the GPU host; its checker must read the reports right before
that one call. Here it scores a small corpus of ctypes programs run through the test double
under the built `cudashim run` (the CLI given as the build folder, as a user would point at
an installation):
  readback          planted: two 4-byte read-backs and a sync at the PLANTED line: found there,
                    at the user's line, one warning for the line, nothing new; clean: no warning
  cheap_readback    planted: one read-back of 0.3 ms in a 50 ms step: info below the warning
                    floor at the PLANTED line, found, no warning (its row names the saving)
  framework_thread  planted: the same calls from a thread inside a site-packages package: an
                    info finding of that framework, no warning, so the habit is not found
  crash             planted: raises: an error row, not the end of the run
  two_markers       two '# PLANTED' lines: an error row naming the markers
plus the same CLI from a wheel-shaped zip, a CLI that does not exist (every row an error, exit
status still 0), the real corpus's
programs failing fast with "no CUDA here" (no GPU on this machine), the README's table naming
each program's planted line and expected finding, and idle_loops.py's
busy-share arithmetic on a synthetic torch.profiler trace.
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REALWORLD = os.path.join(ROOT, "gpu", "realworld")
CHECK = os.path.join(REALWORLD, "check.py")

PRELUDE = """import ctypes, os, sys
cudart = ctypes.PyDLL(os.environ["CORPUS_TEST_CUDART"])  # PyDLL: the GIL stays held, frames are readable
planted = "--planted" in sys.argv
buf = ctypes.c_void_p()
assert cudart.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(64)) == 0
out = ctypes.create_string_buffer(4)
"""
PROGRAMS = {
    "readback.py": PRELUDE + """import time
for _ in range(30):
    time.sleep(0.001)  # a step's own work: a loop takes time (sync.loop_share)
    cudart.cudaMemcpy(buf, out, ctypes.c_size_t(4), 1)  # a small host-to-device copy: no finding
    if planted:
        cudart.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2); cudart.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2); cudart.cudaStreamSynchronize(None)  # PLANTED
cudart.cudaFree(buf)
""",
    "cheap_readback.py": PRELUDE + """import time
for _ in range(30):
    time.sleep(0.05)  # a 50 ms step: the 0.3 ms read-back is 0.6 % of it, below sync.warn_min_step_share
    if planted:
        cudart.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2); cudart.cudaStreamSynchronize(None)  # PLANTED
cudart.cudaFree(buf)
""",
    "framework_thread.py": PRELUDE + """import threading
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import fakefw
if planted:
    t = threading.Thread(target=fakefw.poll, args=(cudart, buf, out, 30)); t.start(); t.join()  # PLANTED
cudart.cudaFree(buf)
""",
    "crash.py": PRELUDE + """if planted:
    raise RuntimeError("planted crash")  # PLANTED
cudart.cudaFree(buf)
""",
    "two_markers.py": PRELUDE + """x = 1  # PLANTED
y = 2  # PLANTED
""",
    os.path.join("site-packages", "fakefw", "__init__.py"): """import ctypes
import time
def poll(cudart, buf, out, n):
    for _ in range(n):
        time.sleep(0.001)
        cudart.cudaMemcpy(out, buf, ctypes.c_size_t(4), 2); cudart.cudaStreamSynchronize(None)
""",
}
CORPUS = [dict(name=n, file=f"{n}.py", framework="ctypes", habit="a read-back", expect="sync.scalar-readback",
               timeout=60) for n in ("readback", "cheap_readback", "framework_thread", "crash", "two_markers")]

errors = []


def expect(cond, what):
    if not cond:
        errors.append(what)


def run_check(args, env, timeout=300):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, CHECK] + args, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t0


def wheel_of(build, tmp):
    """A wheel-shaped zip of the built CLI and library (cudashim/bin, cudashim/lib), as check.py unpacks one."""
    whl = os.path.join(tmp, "cudashim-0+test-py3-none-any.whl")
    with zipfile.ZipFile(whl, "w") as z:
        z.write(os.path.join(build, "bin", "cudashim"), "cudashim/bin/cudashim")
        z.write(os.path.join(build, "lib", "libcudashim.so"), "cudashim/lib/libcudashim.so")
    return whl


def scored_corpus(cli_folder, fake, cudart, tmp):
    for rel, text in PROGRAMS.items():
        path = os.path.join(tmp, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    corpus = os.path.join(tmp, "corpus.json")
    with open(corpus, "w") as f:
        json.dump(CORPUS, f)
    # The double's syncs wait 300 us: the planted read-back costs a step time worth a warning
    # (sync.warn_min_saving_us, docs/findings.md "What a finding costs").
    env = dict(os.environ, LD_LIBRARY_PATH=fake, CORPUS_TEST_CUDART=cudart, CUDASHIM_LOG_LEVEL="error",
               FAKECUDA_SYNC_DELAY_US="300")
    out_json = os.path.join(tmp, "result.json")
    p, _ = run_check(["--corpus", corpus, "--cli", f"built={cli_folder}", "--cli", "missing=/nonexistent/cudashim",
                      "--cli", f"wheel={wheel_of(cli_folder, tmp)}", "--baseline", "--out", os.path.join(tmp, "runs"),
                      "--json", out_json], env)
    expect(p.returncode == 0, f"check.py exited {p.returncode}: {p.stderr[-1500:]}")
    if not os.path.exists(out_json):
        errors.append(f"check.py wrote no {out_json}: {p.stdout[-1500:]}{p.stderr[-1500:]}")
        return
    doc = json.load(open(out_json))
    by = {(r["program"], r["form"], r["cli"]): r for r in doc["results"]}
    ok = by[("readback", "clean", "built")]
    expect(ok["ran"] and ok["n_warnings"] == 0 and ok["verdict"] == "PASS", f"readback clean: {ok}")
    pl = by[("readback", "planted", "built")]
    line = PROGRAMS["readback.py"].splitlines().index(
        next(x for x in PROGRAMS["readback.py"].splitlines() if "# PLANTED" in x)) + 1
    expect(pl["planted_line"] == line, f"readback: planted line {pl['planted_line']}, the file has it at {line}")
    expect(pl["ran"] and pl["found"] and pl["new"] == 0 and pl["verdict"] == "PASS" and pl["precision"] == 1.0,
           f"readback planted: found {pl.get('found')}, new {pl.get('new')}, precision {pl.get('precision')}, "
           f"warnings {pl['warnings']}")
    expect(all(w["id"] == "sync.scalar-readback" and w["line"] == line for w in pl["warnings"]),
           f"readback planted: a warning that is not the planted read-back: {pl['warnings']}")
    # The two read-backs on the planted line are two call sites, one line: one warning.
    expect(pl["n_warnings"] == 1, f"readback planted: {pl['n_warnings']} warnings for one line: {pl['warnings']}")
    # Priced below the warning floor: an info finding at the planted line, found (the price says
    # why it is no warning), no warning, PASS; its row names the saving.
    ch = by[("cheap_readback", "planted", "built")]
    expect(ch["ran"] and ch["found"] and ch.get("below_floor") and ch["n_warnings"] == 0 and ch["verdict"] == "PASS",
           f"cheap_readback planted: found {ch.get('found')}, below_floor {ch.get('below_floor')}, warnings {ch['warnings']}")
    fw = by[("framework_thread", "planted", "built")]
    # A framework's own thread (no frame of the program's) is an info finding since issue 19:
    # no warning at all, and so the habit is not found at the planted line.
    expect(fw["ran"] and fw["n_warnings"] == 0 and not fw["found"] and fw["verdict"] == "FAIL",
           f"framework_thread planted: warnings {fw['warnings']}, found {fw.get('found')}")
    expect(by[("framework_thread", "clean", "built")]["verdict"] == "PASS", "framework_thread clean: not PASS")
    cr = by[("crash", "planted", "built")]
    expect(not cr["ran"] and "exit 1" in (cr["error"] or "") and "planted crash" in cr["error"], f"crash: {cr}")
    tm = by[("two_markers", "clean", "built")]
    expect(not tm["ran"] and "2 '# PLANTED' markers" in (tm["error"] or ""), f"two_markers: {tm}")
    missing = [r for r in doc["results"] if r["cli"] == "missing" and r["program"] != "two_markers"]
    expect(missing and all(not r["ran"] and (r["error"] or "").startswith("no CLI:") for r in missing),
           f"the missing CLI's rows are not all 'no CLI' errors: {[r['error'] for r in missing]}")
    wh = by[("readback", "planted", "wheel")]
    expect(wh["ran"] and wh["found"], f"the CLI unpacked from a wheel: readback planted {wh}")
    base = by[("readback", "clean", "no-shim")]
    expect(base["ran"] and base["wall_s"] is not None, f"readback without the shim: {base}")
    md = p.stdout
    expect("## Totals" in md and "| built (" in md and "2 of 5 (40 %)" in md,
           f"the totals table lacks the built CLI's row with recall 2 of 5:\n{md[-3000:]}")
    print(f"scored corpus: {len(doc['results'])} rows in {doc['seconds']} s")


def real_programs_without_cuda():
    """Each corpus program, on this machine without a GPU, leaves fast with one 'no CUDA here' line."""
    env = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "LD_LIBRARY_PATH")}
    with tempfile.TemporaryDirectory() as tmp:
        out_json = os.path.join(tmp, "r.json")
        p, secs = run_check(["--baseline", "--forms", "clean,planted", "--out", tmp, "--json", out_json], env)
        doc = json.load(open(out_json))
        for r in doc["results"]:
            expect(r["ran"] or (r["rc"] == 2 and (r["error"] or "").startswith(f"{r['program']}.py: no CUDA here:")),
                   f"{r['program']} {r['form']}: neither ran nor left with 'no CUDA here' and exit status 2: "
                   f"exit {r['rc']}, {r['error']}")
            expect(r["ran"] or (r["wall_s"] or 0) < 20, f"{r['program']}: took {r['wall_s']} s to say it has no CUDA")
        print(f"real corpus without CUDA: {len(doc['results'])} rows in {secs:.1f} s, "
              f"e.g. {doc['results'][0]['error']}")


def readme_names_the_planted_lines():
    """gpu/realworld/README.md's table gives each program's planted line: the file's marker must be there."""
    sys.path.insert(0, REALWORLD)
    import check
    readme = open(os.path.join(REALWORLD, "README.md")).read()
    for p in check.CORPUS:
        line, why = check.planted_line(os.path.join(REALWORLD, p["file"]))
        row = next((x for x in readme.splitlines() if x.startswith(f"| `{p['file']}` |")), "")
        expect(line is not None and f"(line {line})" in row and f"`{p['expect']}`" in row,
               f"README.md's row for {p['file']} does not say 'line {line}' and `{p['expect']}` ({why or row[:80]})")


def idle_share_arithmetic():
    sys.path.insert(0, REALWORLD)
    import idle_loops
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "t.json")
        ev = [dict(name=idle_loops.WINDOW, ph="X", cat="user_annotation", ts=1000.0, dur=100.0),
              dict(name=idle_loops.WINDOW, ph="X", cat="gpu_user_annotation", ts=1000.0, dur=500.0),
              dict(name="k1", ph="X", cat="kernel", ts=1010.0, dur=20.0),
              dict(name="k2", ph="X", cat="kernel", ts=1020.0, dur=20.0),     # overlaps k1: union 1010-1040
              dict(name="k3", ph="X", cat="kernel", ts=1012.0, dur=3.0),      # inside k1: adds nothing
              dict(name="m", ph="X", cat="gpu_memcpy", ts=1090.0, dur=30.0),  # clipped at the window's end
              dict(name="s", ph="X", cat="gpu_memset", ts=900.0, dur=50.0),   # before the window
              dict(name="op", ph="X", cat="cpu_op", ts=1000.0, dur=100.0)]    # host work is not GPU time
        with open(trace, "w") as f:
            json.dump(dict(traceEvents=ev), f)
        window, busy, inside, _ = idle_loops.busy_share(trace)
        expect((window, busy, inside) == (100.0, 40.0, 4), f"busy_share: window {window}, busy {busy}, inside {inside}")


def main():
    cli_folder, fake, cudart = sys.argv[1:4]
    with tempfile.TemporaryDirectory() as tmp:
        scored_corpus(cli_folder, fake, cudart, tmp)
    real_programs_without_cuda()
    readme_names_the_planted_lines()
    idle_share_arithmetic()
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: the corpus checker scores reports, classifies sites and turns every failure into a row")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
