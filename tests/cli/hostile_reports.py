#!/usr/bin/env python3
"""hostile_reports.py CLI DIR [--keep FOLDER]: `cudashim report` on files it must refuse.

Every file report reads may be cut, edited, made up or not a file at all. Three corpora,
all generated here:

1. A run folder of one case each (golden: DIR/hostile_reports.golden): a field of the wrong
   type in each section of a report (the issue's {"process": {"pid": "x"}}), of a flight
   record and of a stream line; a 100,000-deep array in a report and a 300,000-deep one in a
   stream line (both overflowed the stack); a report over the size limit (sparse, 40 MiB);
   a stream line over the line limit; a FIFO (hung); a link loop (aborted); a link to a
   device; truncated files; binary garbage; a report with a raw non-UTF-8 byte (as shims
   before the UTF-8 escaping wrote them); names that are not UTF-8 or hold an escape
   sequence; a link to a folder; a report beside the stream of its process, damaged.
   Next to them, good files: a report, a flight record, a stream, one in a subfolder.
2. A sweep: every node of a good report, flight record and stream replaced, one file each,
   by each of several values of another type ("x", -1, 1.5, [], {}, true, null, 2^64).
3. A folder that cannot be read and a file that cannot be read, as another user (when run
   as root, the CLI runs as nobody: CI may run as root).

Each run (text, --json, --html) must end by itself within the timeout, never by a signal,
exit 3 (some inputs bad, the rest read), name each bad file on exactly one stderr line and
summarize every good one; --json must be valid strict JSON. --keep FOLDER leaves the corpora
there (to run another build's CLI on them).
"""
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time

cli, here = sys.argv[1], sys.argv[2]
keep = sys.argv[sys.argv.index("--keep") + 1] if "--keep" in sys.argv else None
TIMEOUT = 120  # seconds, per run; an ASan build reads the whole corpus in a few seconds
errors = []
env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}
env["NO_COLOR"] = "1"

# --- good documents, as the shim writes them (docs/report-schema.md, docs/crash-schema.md)
FRAME = {"file": "/nonexistent/libtrain.so", "address": 4660, "build_id": "", "size": 0, "mtime_ns": 0}
REPORT = {
    "schema": "cudashim.report/1", "cudashim_version": "0.1.0",
    "process": {"pid": 4100, "ppid": 1, "rank": None, "host": "node7", "exe": "/opt/job/train", "argv": ["train"]},
    "api": {"cuInit": {"family": "context", "layer": "driver", "calls": 1, "errors": 0},
            "cuMemAlloc_v2": {"family": "memory", "layer": "driver", "calls": 40, "errors": 2, "last_error": 2},
            "cuStreamSynchronize": {"family": "sync", "layer": "driver", "calls": 300, "errors": 0, "blocked_ns": 25000000}},
    "driver": {"libcuda_dlopen_requests": 1, "libcuda_loaded": "/usr/lib/x86_64-linux-gnu/libcuda.so.1"},
    "blocking": {"blocked_ns": 25000000, "wall_ns": 1000000000, "clock": "tsc"},
    "memory": {"devices": [{"device": 0, "live_bytes": 1048576, "peak_bytes": 8388608, "kinds": {}}], "host": None},
    "findings": [{"id": "sync.scalar-readback", "severity": "warning", "title": "t", "count": 300,
                  "blocked_ns": 25000000, "per_call_ns": 83333, "share_of_wall": 0.025, "fix": "f",
                  "sites": [{"api": "cuStreamSynchronize", "where": "train.py:57 (main)", "count": 300,
                             "blocked_ns": 25000000, "python": ["train.py:57 (main)"], "native": ["libtrain.so+0x1234"],
                             "frames": [FRAME, None], "where_frame": FRAME}]}],
    "library_findings": [{"id": "driver-too-old", "severity": "error", "message": "the driver is older", "fix": "f"}],
    "torch_memory": {"state": "read", "snapshots": [{"moment": "exit", "devices": [
        {"device": 0, "allocated_bytes": 1048576, "allocated_peak_bytes": 2097152, "reserved_bytes": 4194304,
         "reserved_peak_bytes": 4194304, "process_bytes": 8388608, "alloc_retries": 0, "outside_torch_bytes": 4194304,
         "fragmentation": 0.75, "fragmented": True}]}]},
    "libraries": [{"family": "cudart", "file": "/opt/job/libcudart.so.12"}],
}
CRASH = {"schema": "cudashim.crash/1", "reason": "signal", "pid": 4200, "signal": 11, "signal_name": "SIGSEGV",
         "fault_address": "0x0", "threads": [{"tid": 4200, "calls": 3, "last_calls": [
             {"api": "cuInit", "result": 0, "ns": 0}, {"api": "cuMemAlloc_v2", "result": 2, "ns": 10}]}],
         "memory": {"devices": [{"device": 0, "live_bytes": 0, "peak_bytes": 0}]}}
STREAM = [{"t_ns": 1000, "type": "start", "pid": 4300},
          {"t_ns": 1000000000, "type": "snapshot", "calls": 10, "errors": 1, "blocked_ns": 5000,
           "devices": [{"device": 0, "live_bytes": 1048576, "peak_bytes": 2097152}]},
          {"t_ns": 1100000000, "type": "finding", "id": "sync.scalar-readback"},
          {"t_ns": 1200000000, "type": "library_load", "file": "/x/libcudart.so.12"},
          {"t_ns": 1300000000, "type": "signal", "signal": 15}]


def dumps(doc):
    return json.dumps(doc, indent=2)


def stream_text(lines):
    return "".join(json.dumps(line) + "\n" for line in lines)


def with_value(doc, path, value):
    """A deep copy of doc with the node at path (a list of keys and indices) replaced."""
    doc = json.loads(json.dumps(doc))
    if not path:
        return value
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def node_paths(doc, path=()):
    yield list(path)
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from node_paths(v, path + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from node_paths(v, path + (i,))


def write(folder, name, data):
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)
    return path


def run(args, as_nobody=False):
    """Runs the CLI; returns (exit, stdout, stderr) as text, or records a hang or a signal."""
    pre = None
    if as_nobody:
        def pre():
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
    t0 = time.monotonic()
    try:
        p = subprocess.run([cli, *args], capture_output=True, env=env, timeout=TIMEOUT, preexec_fn=pre)
    except subprocess.TimeoutExpired:
        errors.append(f"{args}: still running after {TIMEOUT} s (a hang)")
        return None
    took = time.monotonic() - t0
    if p.returncode < 0:
        errors.append(f"{args}: killed by signal {-p.returncode}:\n{p.stderr.decode(errors='replace')[-2000:]}")
        return None
    return p.returncode, p.stdout, p.stderr.decode("utf-8", "surrogateescape"), took


def shown(name):
    """A file name as the CLI names it: other bytes and control characters as \\xNN."""
    raw = os.fsencode(name)
    out = raw.decode("utf-8", "backslashreplace")
    return "".join(f"\\x{ord(c):02x}" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in out)


def json_shown(name):
    """A file name as --json holds it: other bytes as \\xNN, control characters as they are."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


def check_named(label, cases, res, summary=True):
    """Each bad file on exactly one stderr line; each good one summarized and on none; each
    partly damaged stream summarized up to the damage and on one line."""
    code, out, err, took = res
    out = out.decode("utf-8", "surrogateescape")
    lines = err.splitlines()
    for kind, names in cases.items():
        for n in names:
            hits = [l for l in lines if f"/{shown(n)}: " in l]
            if len(hits) != (0 if kind == "good" else 1):
                errors.append(f"{label}: {kind} file {shown(n)} is named on {len(hits)} stderr lines: {hits}")
            if summary and kind != "bad" and f"/{shown(n)}\n" not in out:
                errors.append(f"{label}: {kind} file {shown(n)} is not summarized")


def check_runs(label, folder, cases, golden=None):
    """Text, --json and --html on folder: exit 3, each bad file named once, the good summarized."""
    res = run(["report", folder])
    if res:
        code, out, err, took = res
        if code != 3:
            errors.append(f"{label}: text: exit {code}, not 3")
        check_named(f"{label} (text)", cases, res)
        if golden:
            got = f"exit {code}\n--- stdout\n{out.decode('utf-8', 'surrogateescape')}--- stderr\n{err}"
            got = got.replace(folder, "RUN")
            path = os.path.join(here, golden)
            if os.environ.get("UPDATE_GOLDEN"):
                open(path, "w", encoding="utf-8", errors="surrogateescape").write(got)
            want = open(path, encoding="utf-8", errors="surrogateescape").read()
            if got != want:
                errors.append(f"{label}: output differs from {path}\n--- got\n{got}\n--- want\n{want}")
        print(f"{label}: text in {took:.1f} s, exit {code}")
    res = run(["report", "--json", folder])
    if res:
        code, out, err, took = res
        check_named(f"{label} (--json)", cases, res, summary=False)
        try:
            merged = json.loads(out.decode("utf-8"))  # strict: valid UTF-8, no raw control character
            paths = {p["report_path"] for p in merged["processes"]}
            read = cases["good"] + cases["partial"]
            missing = [g for g in read if not any(p.endswith("/" + json_shown(g)) for p in paths)]
            if code != 3 or missing:
                errors.append(f"{label}: --json: exit {code}, good files missing: {missing}")
        except (ValueError, KeyError, TypeError) as e:
            errors.append(f"{label}: --json: exit {code}, not a valid JSON document: {e}")
        print(f"{label}: --json in {took:.1f} s, exit {code}")
    page = os.path.join(tempfile.gettempdir(), f"hostile-{os.getpid()}.html")
    res = run(["report", "--html", page, folder])
    if res:
        code, out, err, took = res
        check_named(f"{label} (--html)", cases, res, summary=False)
        html = open(page, encoding="utf-8").read() if os.path.exists(page) else ""
        if code != 3 or "</html>" not in html:
            errors.append(f"{label}: --html: exit {code}, page of {len(html)} bytes")
        os.unlink(page) if os.path.exists(page) else None
        print(f"{label}: --html in {took:.1f} s, exit {code}")


def curated(folder):
    """Corpus 1: returns the names of the files by what report must do with them."""
    cases = {"bad": [], "good": [], "partial": []}
    bad, good, partial = cases["bad"], cases["good"], cases["partial"]

    def add(name, data, is_good=False):
        write(folder, name, data)
        (good if is_good else bad).append(name)

    add("cudashim-good-1.json", dumps(REPORT), True)
    add("cudashim-good-2-crash.json", dumps(CRASH), True)
    add("cudashim-good-3.ndjson", stream_text(STREAM), True)
    os.mkdir(os.path.join(folder, "sub"))
    add("sub/cudashim-good-4.json", dumps(with_value(REPORT, ["process", "pid"], 4101)), True)
    # a field of another type, one per section
    for name, doc, path, value in [
            ("process", REPORT, ["process", "pid"], "x"), ("schema", REPORT, ["schema"], 1),
            ("api", REPORT, ["api", "cuMemAlloc_v2", "calls"], "40"), ("api-row", REPORT, ["api", "cuInit"], 7),
            ("driver", REPORT, ["driver", "libcuda_dlopen_requests"], [1]),
            ("blocking", REPORT, ["blocking", "blocked_ns"], -5), ("memory", REPORT, ["memory", "devices"], {}),
            ("findings", REPORT, ["findings", 0, "sites", 0, "count"], 1.5),
            ("frames", REPORT, ["findings", 0, "sites", 0, "where_frame", "address"], "0x1234"),
            ("library-findings", REPORT, ["library_findings", 0, "id"], 12),
            ("torch", REPORT, ["torch_memory", "snapshots", 0, "devices", 0, "fragmented"], "yes"),
            ("libraries", REPORT, ["libraries", 0], "libcudart.so.12"), ("rank", REPORT, ["process", "rank"], "0"),
            ("crash", CRASH, ["threads", 0, "last_calls", 0, "result"], "x")]:
        suffix = "-crash.json" if doc is CRASH else ".json"
        add(f"cudashim-type-{name}{suffix}", dumps(with_value(doc, path, value)))
    bad_line = with_value(STREAM, [1, "calls"], "ten")
    write(folder, "cudashim-type-stream.ndjson", stream_text(bad_line))  # line 1 summarized, line 2 named
    partial.append("cudashim-type-stream.ndjson")
    # nesting that overflowed the stack: 100,000 deep in a report, 300,000 in a stream line
    add("cudashim-deep-1.json", '{"schema": "cudashim.report/1", "x": ' + "[" * 100000 + "]" * 100000 + "}")
    write(folder, "cudashim-deep-2.ndjson", stream_text(STREAM[:1]) + '{"t_ns": 5, "type": "snapshot", "x": ' + "[" * 300000 +
        "]" * 300000 + "}\n")
    partial.append("cudashim-deep-2.ndjson")
    # sizes: a sparse 40 MiB report, a 5 MiB stream line
    with open(os.path.join(folder, "cudashim-huge.json"), "wb") as f:
        f.truncate(40 << 20)
    bad.append("cudashim-huge.json")
    write(folder, "cudashim-long-line.ndjson", stream_text(STREAM[:1]) + '{"pad": "' + "x" * (5 << 20) + '"}\n')
    partial.append("cudashim-long-line.ndjson")
    # not regular files: a FIFO (blocked the reader), a link loop (aborted it), a device
    os.mkfifo(os.path.join(folder, "cudashim-fifo.json"))
    os.symlink("cudashim-loop.json", os.path.join(folder, "cudashim-loop.json"))
    os.symlink("/dev/zero", os.path.join(folder, "cudashim-zero.ndjson"))
    os.symlink("nothing-here", os.path.join(folder, "cudashim-dangling.json"))
    os.symlink(".", os.path.join(folder, "again"))  # a link to a folder: not followed (no loop)
    bad += ["cudashim-fifo.json", "cudashim-loop.json", "cudashim-zero.ndjson", "cudashim-dangling.json"]
    # cut, empty, garbage
    add("cudashim-truncated.json", dumps(REPORT)[:700])
    add("cudashim-truncated-crash.json", dumps(CRASH)[:90])
    add("cudashim-cut.ndjson", stream_text(STREAM)[:-20], True)  # a last line cut short: summarized, no problem
    add("cudashim-empty.json", "")
    add("cudashim-empty.ndjson", "")
    rnd = random.Random(22)
    add("cudashim-garbage.json", bytes(rnd.randrange(256) for _ in range(4096)))
    add("cudashim-garbage.ndjson", bytes(rnd.randrange(256) for _ in range(4096)))
    add("cudashim-number.json", '{"schema": "cudashim.report/1", "blocking": {"wall_ns": 1e999}}')
    add("cudashim-array.json", "[1, 2, 3]")
    # UTF-8: a raw byte inside a report (as shims before the escaping wrote it); names
    add("cudashim-latin1.json", dumps(REPORT).replace("/opt/job/train", "/opt/caf\udce9/train").encode(
        "utf-8", "surrogateescape"))
    add("cudashim-escaped.json", dumps(with_value(REPORT, ["process", "exe"], "/opt/caf\\xe9/train")), True)
    add(os.fsdecode(b"cudashim-name-\xff.json"), dumps(REPORT), True)
    add("cudashim-esc-\x1b[2J.json", dumps(REPORT), True)
    # a damaged report: its stream beside it is summarized instead
    add("cudashim-lost-7.json", dumps(with_value(REPORT, ["api"], [])))
    add("cudashim-lost-7.ndjson", stream_text(STREAM), True)
    return cases


def sweep(folder):
    """Corpus 2: every node of each good document replaced by values of other types."""
    values = ["x", -1, 1.5, [], {}, True, None, 18446744073709551616]
    names = []
    n = 0
    for kind, doc in (("r", REPORT), ("c", CRASH)):
        for path in node_paths(doc):
            for v in values:
                n += 1
                name = f"cudashim-{kind}{n}{'-crash' if kind == 'c' else ''}.json"
                write(folder, name, dumps(with_value(doc, path, v)))
                names.append(name)
    for path in node_paths(STREAM):
        if not path:
            continue
        for v in values:
            n += 1
            name = f"cudashim-s{n}.ndjson"
            write(folder, name, stream_text(with_value(STREAM, path, v)))
            names.append(name)
    return names


def check_sweep(folder, names):
    for args in (["report", folder], ["report", "--json", folder]):
        res = run(args)
        if not res:
            continue
        code, out, err, took = res
        text = out.decode("utf-8", "surrogateescape")
        if "--json" in args:
            try:
                text = "".join(p["report_path"] + "\n" for p in json.loads(out.decode("utf-8"))["processes"])
            except (ValueError, KeyError, TypeError) as e:
                errors.append(f"sweep --json: not valid JSON: {e}")
                continue
        lines = err.splitlines()
        named = summarized = 0
        for name in names:
            hits = sum(f"/{name}: " in l for l in lines)
            read = f"/{name}\n" in text
            named += hits > 0
            summarized += read
            if hits > 1 or (hits == 0 and not read):
                errors.append(f"sweep {args[1]}: {name}: named on {hits} lines, summarized: {read}")
        if code != 3:
            errors.append(f"sweep {args[1]}: exit {code}, not 3")
        print(f"sweep ({'--json' if '--json' in args else 'text'}): {len(names)} files in {took:.1f} s: {named} named as bad, {summarized} summarized")


def check_permissions(base):
    """Corpus 3: a folder and a file another user cannot read; as root, run as nobody."""
    as_nobody = os.geteuid() == 0
    shared = os.path.join(base, "shared")
    os.makedirs(os.path.join(shared, "alice"))
    write(shared, "cudashim-bob-1.json", dumps(REPORT))
    write(os.path.join(shared, "alice"), "cudashim-alice-2.json", dumps(REPORT))
    write(shared, "cudashim-carol-3.json", dumps(REPORT))
    for d in (base, shared):
        os.chmod(d, 0o755)
    os.chmod(os.path.join(shared, "cudashim-bob-1.json"), 0o644)
    if as_nobody:
        os.chmod(os.path.join(shared, "alice"), 0o700)  # root's, as the shim makes its folders
        os.chmod(os.path.join(shared, "cudashim-carol-3.json"), 0o600)
    else:
        os.chmod(os.path.join(shared, "alice"), 0)
        os.chmod(os.path.join(shared, "cudashim-carol-3.json"), 0)
    res = run(["report", shared], as_nobody=as_nobody)
    if res:
        code, out, err, took = res
        lines = err.splitlines()
        alice = [l for l in lines if "/alice: cannot be read (Permission denied)" in l]
        carol = [l for l in lines if "/cudashim-carol-3.json: cannot be read (Permission denied)" in l]
        if code != 3 or len(alice) != 1 or len(carol) != 1 or b"cudashim-bob-1.json\n" not in out:
            errors.append(f"permissions{' (as nobody)' if as_nobody else ''}: exit {code}:\n{out.decode()}{err}")
        print(f"permissions{' (as nobody)' if as_nobody else ''}: exit {code}\n{err}", end="")
    os.chmod(os.path.join(shared, "alice"), 0o700)
    os.chmod(os.path.join(shared, "cudashim-carol-3.json"), 0o600)


base = keep or tempfile.mkdtemp(prefix="hostile-")
try:
    one = os.path.join(base, "one")
    os.makedirs(one)
    check_runs("one of each", one, curated(one), golden="hostile_reports.golden")
    many = os.path.join(base, "sweep")
    os.makedirs(many)
    check_sweep(many, sweep(many))
    check_permissions(base)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"largest resident set of a run: {peak:.0f} MiB")
    if peak > 1536:
        errors.append(f"a run used {peak:.0f} MiB: more than a bounded read needs")
finally:
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
for e in errors:
    print("FAIL: " + e)
if not errors:
    print("ok: every hostile file named once, every good one summarized; no crash, no hang, valid JSON")
sys.exit(1 if errors else 0)
