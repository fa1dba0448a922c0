#!/usr/bin/env python3
"""check_policies.py --cli CLI --layers POLICY_LAYERS DEPLOY_DIR: the policy files of
deploy/policy pass `cudashim policy check` and load as an administrator's file with no error
and no warning; the node-wide one agrees with the folders the other recipes use; its lock
refuses a looser environment; and what a malformed policy does, as docs/deploy.md says: an
unknown key or a bad value under on_invalid = "warn" does not stop a process, under "fail"
it does, and a file that is not TOML stops it whatever it says (its on_invalid is never read).
`cudashim policy check` rejects (exit 78) all of them."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cli", required=True)
ap.add_argument("--layers", required=True)
ap.add_argument("deploy")
args = ap.parse_args()
failures = []
clean_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)
    return cond


def policy_check(path):
    return subprocess.run([args.cli, "policy", "check", path], env=clean_env, capture_output=True, text=True)


def layers(admin, *env):
    p = subprocess.run([args.layers, admin, *env], capture_output=True, text=True)
    eff = {}
    for line in p.stdout.splitlines():
        m = re.match(r'^(\S+)\s+= "(.*)"\s+# (.*)$', line)
        if m:
            eff[m.group(1)] = (m.group(2), m.group(3))
    stop = re.search(r"^stop: (yes|no)$", p.stdout, re.M)
    return p, eff, stop.group(1) if stop else None


pdir = os.path.join(args.deploy, "policy")
names = sorted(n for n in os.listdir(pdir) if n.endswith(".toml"))
check("deploy/policy has the node-wide and the container policy", {"node.toml", "container.toml"} <= set(names), str(names))
for n in names:
    path = os.path.join(pdir, n)
    p = policy_check(path)
    check(f"{n} passes `cudashim policy check`", p.returncode == 0 and p.stderr == "", f"exit {p.returncode}: {p.stderr.strip()}")
    p, eff, stop = layers(path)
    check(f"{n} loads as /etc/cudashim/policy.toml with no error and no warning", p.returncode == 0 and stop == "no", p.stdout)

node = os.path.join(pdir, "node.toml")
p, eff, _ = layers(node)
outdir = eff.get("output.dir", ("", ""))[0]
check("node.toml sends the reports to a node-local folder", outdir == "/var/tmp/cudashim", outdir)
with open(os.path.join(args.deploy, "node/tmpfiles.d-cudashim.conf")) as f:
    check("tmpfiles.d-cudashim.conf keeps that folder, 1777 root", re.search(rf"^d {re.escape(outdir)} 1777 root root ", f.read(), re.M) is not None)
with open(os.path.join(args.deploy, "slurm/task_prolog.sh")) as f:
    check("the TaskProlog's default base is that folder", f"CUDASHIM_SLURM_OUT_BASE:-{outdir}}}" in f.read())
with open(os.path.join(args.deploy, "node/cudashim-node.sh")) as f:
    check("cudashim-node.sh enable makes that folder by default", f"outdir=${{2:-{outdir}}}" in f.read())
check("node.toml is locked and says on_invalid = warn", eff.get("policy.locked", ("",))[0] == "1" and eff.get("policy.on_invalid", ("",))[0] == "warn",
      str(eff.get("policy.locked")) + str(eff.get("policy.on_invalid")))

p, eff, stop = layers(node, "CUDASHIM_MANAGED=allow", "CUDASHIM_ON_INVALID=fail", "CUDASHIM_OUT=/scratch/me")
check("under node.toml's lock the environment cannot loosen memory.managed (refused with a warning)",
      p.returncode == 1 and eff["memory.managed"][0] == "warn" and "CUDASHIM_MANAGED" in p.stdout, p.stdout)
check("... but may tighten on_invalid and choose its own output folder",
      eff["policy.on_invalid"] == ("fail", "CUDASHIM_ON_INVALID") and eff["output.dir"] == ("/scratch/me", "CUDASHIM_OUT"), str(eff))

with tempfile.TemporaryDirectory() as tmp:
    node_text = open(node).read()
    container_text = open(os.path.join(pdir, "container.toml")).read()
    cases = [
        ("node.toml with an unknown key (on_invalid = warn): an error, the process goes on", node_text + "\n[sync]\nwarmup_hit = 5\n", "no"),
        ("node.toml with a bad value (on_invalid = warn): an error, the process goes on", node_text.replace('managed = "warn"', 'managed = "sometimes"'), "no"),
        ("node.toml that is not TOML: its on_invalid = warn is never read, the process stops", node_text.replace('managed = "warn"', "managed = warn"), "yes"),
        ("container.toml with an unknown key (on_invalid = fail): the process stops", container_text + "\n[sync]\nwarmup_hit = 5\n", "yes"),
    ]
    for i, (name, text, want) in enumerate(cases):
        path = os.path.join(tmp, f"broken{i}.toml")
        with open(path, "w") as f:
            f.write(text)
        check(f"{name}: `cudashim policy check` exits 78", policy_check(path).returncode == 78)
        p, eff, stop = layers(path)
        check(f"{name}: the loader says stop: {want}", p.returncode == 78 and stop == want and "error:" in p.stdout, p.stdout[:400])

if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: the policies of deploy/ pass, and a malformed one does what docs/deploy.md says")
