#!/usr/bin/env python3
"""fleet_recipes_test.py CLI SHIM FAKECUDA_DIR SYNC_RULES DEPLOY_FLEET_DIR: deploy/fleet as far as it runs here.

- the DaemonSet and ServiceMonitor YAML parse (PyYAML; exit 77 without it): the DaemonSet runs
  `cudashim exporter` with options the CLI has, on hostPID, with the runtime folder and the
  driver's GPU folders mounted where its options say, and a port the Service and the
  ServiceMonitor name; the systemd unit's ExecStart uses options the CLI has;
- the Grafana dashboard is JSON whose every query names only series the exporter serves;
- the Slurm prolog makes the runtime folder (1777) and the job's GPU file; the epilog, after a
  real process under the shim ended, writes cudashim-job-<id>.prom with that process's series
  and reaps its record.
"""
import json
import os
import re
import stat
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("skip: PyYAML is not installed (Debian: python3-yaml)")
    sys.exit(77)

cli, shim, fake, prog, fleet_dir = (os.path.abspath(a) for a in sys.argv[1:6])
errors = []
helptext = subprocess.run([cli, "exporter", "--help"], capture_output=True, text=True, check=True).stdout
known = set(re.findall(r"--[a-z-]+", helptext))


def check_options(where, words):
    for w in words:
        if w.startswith("--") and w.split("=")[0] not in known:
            errors.append(f"{where}: `cudashim exporter` has no option {w}")


docs = [d for f in ("exporter-daemonset.yaml", "servicemonitor.yaml")
        for d in yaml.safe_load_all(open(os.path.join(fleet_dir, f))) if d]
kinds = {d["kind"]: d for d in docs}
for k in ("DaemonSet", "Service", "ServiceMonitor"):
    if k not in kinds:
        errors.append(f"no {k} in deploy/fleet")
ds = kinds["DaemonSet"]
spec = ds["spec"]["template"]["spec"]
if ds["spec"]["selector"]["matchLabels"].items() - ds["spec"]["template"]["metadata"]["labels"].items():
    errors.append("the DaemonSet's selector does not match its pods' labels")
if not spec.get("hostPID"):
    errors.append("the DaemonSet needs hostPID: the exporter checks each record's process in /proc")
(c,) = spec["containers"]
cmd = c["command"]
if cmd[:2] != ["cudashim", "exporter"]:
    errors.append(f"the exporter container runs {cmd}")
check_options("DaemonSet", cmd)
mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
volumes = {v["name"] for v in spec["volumes"]}
for opt in ("--dir", "--nvidia-gpus"):
    path = cmd[cmd.index(opt) + 1]
    if mounts.get(path) not in volumes:
        errors.append(f"DaemonSet: {opt} {path} is not a mounted volume")
port = int(cmd[cmd.index("--port") + 1])
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
if ports.get("metrics") != port:
    errors.append(f"DaemonSet: container port {ports} is not --port {port}")
svc = kinds["Service"]
if svc["spec"]["selector"].items() - ds["spec"]["template"]["metadata"]["labels"].items():
    errors.append("the Service selects no exporter pod")
if [p["name"] for p in svc["spec"]["ports"]] != ["metrics"]:
    errors.append("the Service's port is not named metrics")
sm = kinds["ServiceMonitor"]
if sm["spec"]["selector"]["matchLabels"].items() - svc["metadata"]["labels"].items():
    errors.append("the ServiceMonitor selects no Service")
if [e["port"] for e in sm["spec"]["endpoints"]] != ["metrics"] or sm["spec"]["endpoints"][0]["path"] != "/metrics":
    errors.append("the ServiceMonitor does not scrape the metrics port's /metrics")

unit = open(os.path.join(fleet_dir, "cudashim-exporter.service")).read()
execs = [l.split("=", 1)[1].split() for l in unit.splitlines() if l.startswith("ExecStart=")]
if len(execs) != 1 or execs[0][1:3] != ["exporter", "--dir"]:
    errors.append(f"the unit's ExecStart: {execs}")
else:
    check_options("systemd unit", execs[0])

with tempfile.TemporaryDirectory() as tmp:
    empty = os.path.join(tmp, "empty")
    os.mkdir(empty)
    served = set(re.findall(r"^# TYPE (\S+)", subprocess.run([cli, "exporter", "--dir", empty, "--once"],
                                                               capture_output=True, text=True).stdout, re.M))
    dash = json.load(open(os.path.join(fleet_dir, "grafana-dashboard.json")))
    exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
    exprs += [v["query"] for v in dash["templating"]["list"] if v["type"] == "query"]
    for e in exprs:
        for name in re.findall(r"\bcudashim_[a-z_]+", e):
            if name not in served:
                errors.append(f"dashboard: {name} is not a series the exporter serves")
    doc = open(os.path.join(fleet_dir, "..", "..", "docs", "fleet.md")).read()
    for name in sorted(served):
        if f"`{name}`" not in doc:
            errors.append(f"docs/fleet.md does not list {name}")
    if len(dash["panels"]) < 4:
        errors.append("dashboard: fewer panels than issue 34 asks for")

    # Slurm: the prolog, a job's process, the epilog
    rundir, textfile = os.path.join(tmp, "run"), os.path.join(tmp, "textfile")
    os.mkdir(textfile)
    env = dict(os.environ, CUDASHIM_FLEET_DIR=rundir, SLURM_JOB_ID="4711", SLURM_JOB_UID=str(os.getuid()),
               SLURM_JOB_GPUS="2,3", CUDASHIM_CLI=cli, CUDASHIM_TEXTFILE_DIR=textfile)
    p = subprocess.run([os.path.join(fleet_dir, "slurm_prolog.sh")], env=env, capture_output=True, text=True)
    if p.returncode != 0 or stat.S_IMODE(os.stat(rundir).st_mode) != 0o1777:
        errors.append(f"prolog: exit {p.returncode}, folder {oct(os.stat(rundir).st_mode) if os.path.exists(rundir) else 'missing'}")
    elif "SLURM_JOB_GPUS=2,3" not in open(os.path.join(rundir, "jobs", "4711")).read():
        errors.append("prolog: the job's GPUs are not recorded")
    job_env = dict(env, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=tmp, CUDASHIM_SUMMARY="0")
    subprocess.run([prog, "readback"], env=job_env, check=True, capture_output=True, timeout=60)
    p = subprocess.run([os.path.join(fleet_dir, "slurm_epilog.sh")], env=env, capture_output=True, text=True)
    prom = os.path.join(textfile, "cudashim-job-4711.prom")
    if p.returncode != 0 or not os.path.exists(prom):
        errors.append(f"epilog: exit {p.returncode}, {os.listdir(textfile)}: {p.stderr}")
    else:
        text = open(prom).read()
        if not re.search(r'^cudashim_job_finding_calls\{.*slurm_job_id="4711".*finding="sync.scalar-readback".*\} 40$', text, re.M):
            errors.append(f"epilog: the job's summary lacks its finding:\n{text[:1500]}")
        if [f for f in os.listdir(rundir) if f.endswith(".rec")]:
            errors.append("epilog: the ended process's record was not reaped")
        if os.path.exists(os.path.join(rundir, "jobs", "4711")):
            errors.append("epilog: the job's GPU file was left")

for e in errors:
    print("FAIL:", e)
if not errors:
    print("ok: deploy/fleet parses and holds together; the Slurm pair ran a job's summary into the textfile")
sys.exit(1 if errors else 0)
