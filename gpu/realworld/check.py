#!/usr/bin/env python3
"""check.py: run the corpus of real framework programs under cudashim and score its findings.

Each program of CORPUS runs in its clean form and in its planted form (`--planted`: one habit
switched on, at the one line of the file marked `# PLANTED`), under `CLI run --out DIR --
python3 PROG` for every --cli given, and once without the shim (--baseline: its wall time).
The reports (docs/report-schema.md) are read and each warning is classified:

- a warning is one line of a finding of severity warning or error (`findings[]`, the
  report's sync/alloc/copy rules; its call sites on one line count once, as the summary prints
  them; a finding with no site counts once, not at a user line);
- it is *at the user's line* when its site's `where` names a line of the program's own file;
- the planted habit is *found* when a warning with the expected id names the planted line,
  or when that finding is there as info *below the warning floor* (issue 33: severity follows
  the price; its fix says "below the warning floor: it would save X ms a step"): found, priced
  below what anyone would act on; the table says "yes (below the floor: ...)";
- *new* warnings of a planted run: those the clean run of the same CLI did not have (same id
  and site), other than the planted one.
Library and driver findings (`library_findings[]`) are listed but kept out of the precision:
they describe the environment, not a line of the job.

Verdicts: clean PASS = no warning at all; planted PASS = the habit found at its line and nothing
else new. Precision = warnings at the user's line / all warnings; recall = habits found / planted.
Errors (a missing CLI, a crash, a timeout, no report) become rows; the exit status is 0 whatever
the corpus showed, so the one GPU call always brings its tables back.

usage: check.py --cli before=PATH [--cli after=PATH] [--baseline] [--out DIR] [--json FILE]
       check.py --render FILE.json          (the tables again, from a saved --json)
PATH: the cudashim executable, a wheel (.whl), a folder holding one, a pip --target folder,
a virtual environment, or a build tree (bin/cudashim next to lib/libcudashim.so).
"""
import argparse
import atexit
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
MARKER = "# PLANTED"
NO_CUDA_TEXT = "no CUDA here:"  # what harness.no_cuda() prints
# name, file, framework, the planted habit, the finding it must raise at the PLANTED line, timeout (s)
CORPUS = [
    dict(name="hf_trainer", file="hf_trainer.py", framework="transformers Trainer",
         habit="loss.item() every step in compute_loss", expect="sync.scalar-readback", timeout=150),
    dict(name="lightning_fit", file="lightning_fit.py", framework="PyTorch Lightning",
         habit="torch.cuda.empty_cache() every step", expect="alloc.churn-after-warmup", timeout=120),
    dict(name="dataloader_workers", file="dataloader_workers.py", framework="DataLoader, 4 workers",
         habit="pin_memory=False with non_blocking copies", expect="copy.async-from-pageable", timeout=120),
    dict(name="ddp_nccl", file="ddp_nccl.py", framework="DDP over NCCL, 1 rank",
         habit="torch.cuda.synchronize() every step", expect="sync.explicit-in-loop", timeout=150),
    dict(name="jax_mlp", file="jax_mlp.py", framework="JAX jit",
         habit="jax.device_get(loss) every step", expect="sync.scalar-readback", timeout=120),
    dict(name="cupy_kernels", file="cupy_kernels.py", framework="CuPy",
         habit="a raw cupy.cuda.Memory every step", expect="alloc.churn-after-warmup", timeout=120),
    dict(name="compile_mlp", file="compile_mlp.py", framework="torch.compile (Inductor)",
         habit="nonzero() of a mask every step", expect="sync.scalar-readback", timeout=200),
    dict(name="cudnn_benchmark", file="cudnn_benchmark.py", framework="cudnn.benchmark, multi-scale",
         habit="loss.item() every step beside cuDNN's autotuning bursts", expect="sync.scalar-readback", timeout=150),
]
# A Python site: `FILE:LINE (FUNCTION)` (docs/report-schema.md, findings[].sites[].where); whatever a
# later shim writes after the line (a framework's name, say) does not stop the file from being read.
WHERE = re.compile(r"^(?P<file>.+?):(?P<line>\d+)(?=\s|$)")
# A site inside an installed helper package names the user's line after it (issue 33.2):
# `HELPER:LINE (fn), inside PKG, reached from your line FILE:LINE (fn)`: that line is the site's.
REACHED = re.compile(r"reached from your line (?P<file>.+?):(?P<line>\d+)(?=\s|$)")


def where_match(where):
    """The user's FILE:LINE of a site's `where` (the line a helper was reached from, else its own), or None."""
    return REACHED.search(where) or WHERE.match(where)
FORMS = ("clean", "planted")


# ---------------------------------------------------------------------------- the CLIs

def resolve_cli(path, scratch):
    """(the cudashim executable for PATH, None) or (None, why not): see the usage for PATH."""
    path = os.path.abspath(path)
    if os.path.isfile(path) and path.endswith(".whl"):
        return unpack_wheel(path, scratch)
    if os.path.isdir(path):
        for pattern in ("cudashim/bin/cudashim", "lib/python3*/site-packages/cudashim/bin/cudashim",
                        "bin/cudashim"):
            for cand in sorted(glob.glob(os.path.join(path, pattern))):
                if os.path.isfile(cand) and is_native(cand):
                    return cand, None
        wheels = sorted(glob.glob(os.path.join(path, "cudashim-*.whl")), key=os.path.getmtime)
        if wheels:
            return unpack_wheel(wheels[-1], scratch)
        return None, f"no cudashim executable or wheel in the folder {path}"
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path, None
    return None, f"{path} is no cudashim executable, wheel or folder holding one"


def is_native(path):
    """True for an ELF file (a pip folder's bin/cudashim is a Python script that needs PYTHONPATH)."""
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def unpack_wheel(whl, scratch):
    """Unzip a wheel (a zip, with no install step needed) and return its cudashim executable."""
    dest = tempfile.mkdtemp(prefix="wheel-", dir=scratch)
    try:
        with zipfile.ZipFile(whl) as z:
            z.extractall(dest)
    except (OSError, zipfile.BadZipFile) as e:
        return None, f"cannot unpack the wheel {whl}: {e}"
    cli = os.path.join(dest, "cudashim", "bin", "cudashim")
    if not os.path.isfile(cli):
        return None, f"the wheel {whl} holds no cudashim/bin/cudashim"
    for f in glob.glob(os.path.join(dest, "cudashim", "bin", "*")) + glob.glob(os.path.join(dest, "cudashim", "lib", "*")):
        os.chmod(f, 0o755)  # zip members lose their mode bits
    return cli, None


def has_quiet(cli):
    """True when `CLI run` takes --quiet (no summary: stderr.txt then ends with the job's own lines)."""
    try:
        p = subprocess.run([cli, "run", "--help"], capture_output=True, text=True, timeout=20)
        return "--quiet" in p.stdout + p.stderr
    except (OSError, subprocess.SubprocessError):
        return False


def cli_version(cli):
    try:
        p = subprocess.run([cli, "--version"], capture_output=True, text=True, timeout=20)
        return (p.stdout.strip() or p.stderr.strip()).splitlines()[0][:120]
    except (OSError, subprocess.SubprocessError, IndexError) as e:
        return f"unknown ({e})"


# ---------------------------------------------------------------------------- running

def planted_line(prog):
    """(line, None) of the one '# PLANTED' marker of the program, or (None, why)."""
    try:
        with open(prog, encoding="utf-8") as f:
            lines = [i for i, text in enumerate(f, 1) if MARKER in text]
    except OSError as e:
        return None, f"cannot read {prog}: {e}"
    if len(lines) != 1:
        return None, f"{os.path.basename(prog)} has {len(lines)} '{MARKER}' markers, wants exactly one"
    return lines[0], None


def run_one(cmd, rundir, timeout, env):
    """Run CMD in RUNDIR (its own process group), stdout and stderr to files there.
    Returns (exit status or 'timeout', wall seconds, stderr as text)."""
    os.makedirs(rundir, exist_ok=True)
    t0 = time.monotonic()
    with open(os.path.join(rundir, "stdout.txt"), "wb") as out, open(os.path.join(rundir, "stderr.txt"), "wb") as err:
        try:
            p = subprocess.Popen(cmd, cwd=rundir, stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env,
                                 start_new_session=True)
        except OSError as e:
            return f"cannot start: {e}", 0.0, ""
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(p)
            rc = "timeout"
    wall = time.monotonic() - t0
    with open(os.path.join(rundir, "stderr.txt"), "rb") as f:
        text = f.read()[-200000:].decode("utf-8", "backslashreplace")
    return rc, wall, text


def kill_group(p):
    """End the process group this script started for one run (TERM, then KILL after 5 s)."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def last_line(text, containing=""):
    """The last non-empty line of TEXT (holding CONTAINING), cut to 200 characters."""
    lines = [x.strip() for x in text.splitlines() if x.strip() and containing in x]
    return lines[-1][:200] if lines else ""


# ---------------------------------------------------------------------------- reading reports

def read_reports(rundir):
    """(the parsed process reports of one run, its crash records' names, the files that could not be read).
    A crash record (`-crash.json`, schema cudashim.crash/1) holds no findings: it is only named."""
    reports, crashes, bad = [], [], []
    for f in sorted(glob.glob(os.path.join(rundir, "cudashim-*.json"))):
        if f.endswith("-crash.json"):
            crashes.append(os.path.basename(f))
            continue
        try:
            with open(f, encoding="utf-8") as fh:
                r = json.load(fh)
            if not isinstance(r, dict) or not str(r.get("schema", "")).startswith("cudashim.report/"):
                raise ValueError(f"schema {r.get('schema') if isinstance(r, dict) else type(r).__name__}")
            reports.append(r)
        except (OSError, ValueError) as e:
            bad.append(f"{os.path.basename(f)}: {e}")
    return reports, crashes, bad


def short_path(path):
    """A frame's file, shortened for a table: site-packages/..., or the last two folders."""
    for key in ("/site-packages/", "/dist-packages/"):
        if key in path:
            return "site-packages/" + path.split(key, 1)[1]
    parts = path.split("/")
    return "/".join(parts[-2:]) if len(parts) > 2 else path


def classify(reports, prog, line):
    """The warnings of one run (dicts), its library/driver warnings (strings), and its info
    findings priced below the warning floor at the planted line (dicts: id, saving, fix)."""
    prog_real = os.path.realpath(prog)
    warnings, library, floored = [], [], []
    for r in reports:
        proc = r.get("process") or {}
        who = f"pid {proc.get('pid', '?')}" + (f" rank {proc['rank']}" if proc.get("rank") is not None else "")
        for fnd in r.get("findings") or []:
            if fnd.get("severity") not in ("warning", "error"):
                if str(fnd.get("fix", "")).startswith("below the warning floor"):
                    for s in fnd.get("sites") or []:
                        m = where_match(str(s.get("where", "")))
                        if m and os.path.realpath(m["file"]) == prog_real and int(m["line"]) == line:
                            floored.append(dict(id=fnd.get("id", "?"), fix=str(fnd["fix"]),
                                                saving_ns=fnd.get("predicted_saving_per_step_ns"),
                                                step_ns=fnd.get("step_ns")))
                            break
                continue
            sites = fnd.get("sites") or [None]
            for s in sites:
                w = dict(id=fnd.get("id", "?"), severity=fnd.get("severity"), who=who,
                         count=(s or fnd).get("count", 0), where="(no call site)", file=None, line=None,
                         api=(s or {}).get("api", ""), innermost="", user_line=False, planted=False)
                if s is not None:
                    w["where"] = str(s.get("where", ""))
                    m = where_match(w["where"])
                    if m:
                        w["file"], w["line"] = m["file"], int(m["line"])
                        w["user_line"] = os.path.realpath(m["file"]) == prog_real
                    py = s.get("python") or []
                    w["innermost"] = str(py[0]) if py else ""
                w["planted"] = w["user_line"] and w["line"] == line
                # Call sites of one finding on one line (x.to(dev), y.to(dev)) are one warning,
                # as the summary prints them: one line to the user.
                same = next((o for o in warnings if o["id"] == w["id"] and o["who"] == who and o["where"] == w["where"]
                             and w["file"] is not None), None)
                if same is not None:
                    same["count"] += w["count"]
                    continue
                warnings.append(w)
        for lf in r.get("library_findings") or []:
            if lf.get("severity") in ("warning", "error"):
                library.append(f"{lf.get('id', '?')}: {str(lf.get('message', ''))[:160]} ({who})")
    return warnings, library, floored


def site_key(w):
    return (w["id"], w["where"])


def score(res, clean_res, expect):
    """Fill a run's numbers: warnings, at the user's line, precision, found, new, verdict."""
    ws = res["warnings"]
    res["n_warnings"] = len(ws)
    res["n_user_line"] = sum(1 for w in ws if w["user_line"])
    res["precision"] = res["n_user_line"] / len(ws) if ws else None
    if res["form"] == "clean":
        res["verdict"] = "PASS" if not ws else "FAIL"
        return
    hit = [w for w in ws if w["planted"] and w["id"] == expect]
    res["found"] = bool(hit)
    below = [f for f in res.get("floored", []) if f["id"] == expect]
    if not hit and below:  # found, priced below the warning floor (info)
        f = below[0]
        res["found"] = True
        res["below_floor"] = (f"{f['saving_ns'] / 1e6:.3f} ms of a {f['step_ns'] / 1e6:.1f} ms step"
                              if f.get("saving_ns") is not None and f.get("step_ns") else f["fix"][:80])
    res["at_line_as"] = sorted({w["id"] for w in ws if w["planted"] and w["id"] != expect})
    if not (clean_res and clean_res.get("ran")):
        res["new"] = None
        res["verdict"] = ("FOUND" if res["found"] else "FAIL") + " (no clean run to compare)"
        return
    before = {site_key(w) for w in clean_res["warnings"]}
    res["new"] = sum(1 for w in ws if site_key(w) not in before and not (w["planted"] and w["id"] == expect))
    res["verdict"] = "PASS" if res["found"] and res["new"] == 0 else "FAIL"


# ---------------------------------------------------------------------------- the corpus

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", action="append", default=[], metavar="LABEL=PATH",
                    help="a cudashim to score (repeat for before/after)")
    ap.add_argument("--baseline", action="store_true", help="also run each program's clean form once without the shim")
    ap.add_argument("--only", default="", help="comma-separated program names")
    ap.add_argument("--forms", default="clean,planted", help="comma-separated: clean, planted")
    ap.add_argument("--corpus", help="a JSON list replacing CORPUS (the CPU self-test uses it)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter that runs the programs")
    ap.add_argument("--out", help="folder for the runs' reports and logs (default: a temporary folder)")
    ap.add_argument("--json", help="write every result here, for --render")
    ap.add_argument("--md", help="write the tables here too (they are printed at the end either way)")
    ap.add_argument("--jobs", type=int, default=1, help="runs side by side (run.sh: 2, the two CLIs together)")
    ap.add_argument("--deadline-s", type=float, default=0, help="stop starting runs after this many seconds (0: none)")
    ap.add_argument("--render", metavar="FILE.json", help="print the tables of a saved --json and exit")
    a = ap.parse_args()
    if a.render:
        with open(a.render, encoding="utf-8") as f:
            print(render(json.load(f)))
        return 0
    t_start = time.monotonic()
    work = os.path.abspath(a.out) if a.out else tempfile.mkdtemp(prefix="corpus-")
    os.makedirs(work, exist_ok=True)
    corpus = CORPUS
    if a.corpus:
        with open(a.corpus, encoding="utf-8") as f:
            corpus = json.load(f)
        base = os.path.dirname(os.path.abspath(a.corpus))
        for p in corpus:
            p["file"] = os.path.join(base, p["file"])
    only = {x for x in a.only.split(",") if x}
    corpus = [dict(p, file=os.path.join(HERE, p["file"])) for p in corpus if not only or p["name"] in only]
    forms = [x for x in FORMS if x in a.forms.split(",")]

    clis = []
    for spec in a.cli:
        label, _, path = spec.rpartition("=")
        label = label or f"cli{len(clis) + 1}"
        scratch = tempfile.mkdtemp(prefix="corpus-cli-")  # not in WORK: an unpacked wheel stays out of the archive
        atexit.register(shutil.rmtree, scratch, True)
        exe, why = resolve_cli(path, scratch)
        clis.append(dict(label=label, path=path, exe=exe, error=why, version=cli_version(exe) if exe else "",
                         quiet=bool(exe) and has_quiet(exe)))
        print(f"check: {label}: {exe or why}" + (f" ({clis[-1]['version']})" if exe else ""), flush=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", PYTHONDONTWRITEBYTECODE="1")

    results = []

    def remaining():
        return a.deadline_s - (time.monotonic() - t_start) if a.deadline_s else float("inf")

    def execute(prog, form, label, cli):
        res = dict(program=prog["name"], form=form, cli=label, ran=False, rc=None, wall_s=None, error=None,
                   warnings=[], library=[], reports=0, processes=[])
        line, why = planted_line(prog["file"])
        rundir = os.path.join(work, label, f"{prog['name']}-{form}")
        cmd = [a.python, prog["file"]] + (["--planted"] if form == "planted" else [])
        if why:
            res["error"] = why
        elif cli is not None and cli["exe"] is None:
            res["error"] = f"no CLI: {cli['error']}"
        elif remaining() < 20:
            res["error"] = f"skipped: {time.monotonic() - t_start:.0f} s used of the {a.deadline_s:.0f} s deadline"
        else:
            timeout = max(10, min(prog.get("timeout", 120), remaining() - 5))
            if cli is not None:
                cmd = [cli["exe"], "run", "--out", rundir] + (["--quiet"] if cli["quiet"] else []) + ["--"] + cmd
            rc, wall, tail = run_one(cmd, rundir, timeout, env)
            res.update(rc=rc, wall_s=round(wall, 1))
            if NO_CUDA_TEXT in tail:
                res["error"] = last_line(tail, NO_CUDA_TEXT)
            elif rc == "timeout":
                res["error"] = f"timeout after {timeout:.0f} s: {last_line(tail)}"
            elif rc != 0:
                res["error"] = f"exit {rc}: {last_line(tail)}"
            if cli is not None:
                reports, crashes, bad = read_reports(rundir)
                res["reports"] = len(reports)
                if crashes:
                    res["error"] = (res["error"] + "; " if res["error"] else "") + "crash record: " + ", ".join(crashes)
                res["processes"] = [" ".join(os.path.basename(x) for x in (r.get("process") or {}).get("argv", [])[:3])
                                    for r in reports]
                if bad:
                    res["error"] = (res["error"] + "; " if res["error"] else "") + "unreadable report: " + "; ".join(bad)
                if not reports and not res["error"]:
                    res["error"] = "no report written"
                res["warnings"], res["library"], res["floored"] = classify(reports, prog["file"], line)
                res["ran"] = bool(reports) and rc == 0
            else:
                res["ran"] = rc == 0
        res["planted_line"] = line
        status = res["error"] or f"{len(res['warnings'])} warning(s)"
        print(f"check: [{time.monotonic() - t_start:5.0f}s] {label:>8} {prog['name']} {form}: "
              f"{'%.1f s, ' % res['wall_s'] if res['wall_s'] is not None else ''}{status}", flush=True)
        return res

    def execute_or_row(prog, form, label, cli):
        """execute(), with whatever goes wrong in the checker itself turned into the run's row."""
        try:
            return execute(prog, form, label, cli)
        except Exception as e:  # noqa: BLE001: one bad report must not cost the whole table
            return dict(program=prog["name"], form=form, cli=label, ran=False, rc=None, wall_s=None, warnings=[],
                        library=[], reports=0, processes=[], planted_line=None,
                        error=f"checker error: {type(e).__name__}: {e}"[:300])

    for prog in corpus:
        # The runs of one program, in the order that matters most when the deadline comes: without
        # the shim first (clean, and planted when --jobs lets it run beside it), then each form under
        # every CLI. --jobs N runs N of them side by side, so that each run has the same company.
        runs = [("clean", "no-shim", None)] * bool(a.baseline and "clean" in forms)
        if a.baseline and a.jobs > 1 and "planted" in forms:
            runs.append(("planted", "no-shim", None))
        runs += [(form, cli["label"], cli) for form in forms for cli in clis]
        done = {}
        for i in range(0, len(runs), a.jobs):
            group = runs[i:i + a.jobs]
            with concurrent.futures.ThreadPoolExecutor(len(group)) as pool:
                for (form, label, _), res in zip(group, pool.map(lambda r: execute_or_row(prog, *r), group)):
                    done[(form, label)] = res
                    results.append(res)
        for (form, label), res in done.items():
            if label != "no-shim":
                score(res, done.get(("clean", label)), prog["expect"])
    doc = dict(corpus=[{k: v for k, v in p.items()} for p in corpus], clis=clis, baseline=a.baseline,
               forms=forms, jobs=a.jobs, results=results, seconds=round(time.monotonic() - t_start, 1), work=work)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    text = render(doc)
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text)
    print(text)
    return 0


# ---------------------------------------------------------------------------- the tables

def pct(x):
    return "-" if x is None else f"{100 * x:.0f} %"


def render(doc):
    labels = [c["label"] for c in doc["clis"]]
    by = {(r["program"], r["form"], r["cli"]): r for r in doc["results"]}
    out = []
    head = "| program | form | planted habit (expected finding) | no shim s |"
    rule = "|---|---|---|---:|"
    for lb in labels:
        head += f" {lb}: warnings | at user line | precision | planted found | new | wall s (vs no shim) | verdict |"
        rule += "---:|---:|---:|---|---:|---:|---|"
    out += ["## Per program", "", head, rule]
    for p in doc["corpus"]:
        for form in doc["forms"]:
            base = by.get((p["name"], form, "no-shim"))
            base_s = "-" if base is None or base["wall_s"] is None else f"{base['wall_s']}"
            if base is not None and base["error"]:
                base_s += f" ({base['error'][:60]})"
            what = f"{p['habit']} ({p['expect']}, line {by_any(by, p['name'], form, labels, 'planted_line')})" \
                if form == "planted" else "-"
            row = f"| {p['name']} ({p['framework']}) | {form} | {what} | {base_s} |"
            for lb in labels:
                r = by.get((p["name"], form, lb))
                if r is None:
                    row += " - | - | - | - | - | - | not run |"
                    continue
                if not r["ran"]:
                    row += f" - | - | - | - | - | {r['wall_s'] if r['wall_s'] is not None else '-'} | ERROR: {r['error']} |"
                    continue
                found = "-" if form == "clean" else (("yes" + (f" (info, below the warning floor: saves {r['below_floor']})"
                                                                if r.get("below_floor") else "")) if r.get("found") else
                                                     "no" + (f" (at the line as {', '.join(r['at_line_as'])})" if r.get("at_line_as") else ""))
                new = "-" if form == "clean" or r.get("new") is None else str(r["new"])
                wall = f"{r['wall_s']}"
                if base is not None and base["ran"] and base["wall_s"]:
                    wall += f" ({100 * (r['wall_s'] / base['wall_s'] - 1):+.0f} %)"  # the overhead column
                row += (f" {r['n_warnings']} | {r['n_user_line']} | {pct(r['precision'])} | {found} | {new} | "
                        f"{wall} | {r['verdict']} |")
            out.append(row)
    out += ["", "## Totals", "",
            "| cudashim | warnings | at user line | precision | planted found (recall) | clean programs without a warning | "
            "warnings on clean programs (not at a user line) | library/driver warnings | runs in error |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in doc["clis"]:
        rs = [r for r in doc["results"] if r["cli"] == c["label"]]
        ok = [r for r in rs if r["ran"]]
        w = sum(r["n_warnings"] for r in ok)
        u = sum(r["n_user_line"] for r in ok)
        planted = [r for r in ok if r["form"] == "planted"]
        found = sum(1 for r in planted if r.get("found"))
        n_planted = sum(1 for r in rs if r["form"] == "planted")
        clean = [r for r in ok if r["form"] == "clean"]
        n_clean = sum(1 for r in rs if r["form"] == "clean")
        clean_w = sum(r["n_warnings"] for r in clean)
        clean_off = sum(r["n_warnings"] - r["n_user_line"] for r in clean)
        lib = sum(len(r["library"]) for r in ok)
        out.append(f"| {c['label']} ({c['version'] or c['error']}) | {w} | {u} | {pct(u / w if w else None)} | "
                   f"{found} of {n_planted} ({pct(found / n_planted if n_planted else None)}) | "
                   f"{sum(1 for r in clean if r['n_warnings'] == 0)} of {n_clean} | {clean_w} ({clean_off}) | {lib} | "
                   f"{sum(1 for r in rs if not r['ran'])} |")
    out += ["", f"Precision: warnings at the user's line over all warnings (a warning is one call site of a finding "
            f"of severity warning or error). Recall: planted habits found at their line with the expected id (a warning, or info priced below the warning floor). "
            f"New: warnings of a planted run that its clean run did not have, the planted one excepted. "
            f"Wall times include start-up; the no-shim runs of a program are its first (cold caches); "
            f"with --jobs {doc.get('jobs', 1)} that many runs of one program run side by side. "
            f"Run in {doc.get('seconds', '?')} s.", "", "## Every warning", ""]
    for r in doc["results"]:
        if r["cli"] == "no-shim" or not (r["warnings"] or r["library"] or r["error"]):
            continue
        out.append(f"- **{r['cli']}, {r['program']} {r['form']}**"
                   + (f" ({r['reports']} report(s): {'; '.join(r['processes'])})" if r.get("processes") else "")
                   + (f": {r['error']}" if r["error"] else ""))
        for w in r["warnings"]:
            tag = "PLANTED line" if w["planted"] else ("user line" if w["user_line"] else "not a user line")
            where = f"{short_path(w['file'])}:{w['line']}" if w["file"] else w["where"]
            inner = f"; innermost Python frame {short_path(w['innermost'])}" if w["innermost"] and not w["user_line"] else ""
            out.append(f"  - `{w['id']}` x{w['count']} at `{where}` [{w['api']}] ({tag}; {w['who']}{inner})")
        for lib in r["library"]:
            out.append(f"  - library/driver: {lib}")
    return "\n".join(out) + "\n"


def by_any(by, name, form, labels, key):
    for lb in labels:
        r = by.get((name, form, lb))
        if r is not None and r.get(key) is not None:
            return r[key]
    return "?"


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
