#!/usr/bin/env python3
"""node_script_test.py --cli CLI --lib LIBCUDASHIM DEPLOY_DIR: deploy/node/cudashim-node.sh
on a staged tree (--root), never on this machine's /etc: it installs a policy only after the
check and keeps the previous one for a rollback; it enables the preload only with a policy,
for a library the loader loads cleanly and that no one else can replace, makes the reports'
folder 1777 and its tmpfiles.d line, puts the shim first in ld.so.preload and keeps the
other lines, does it once however often it runs, and takes it back out; files are 0644."""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cli", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("deploy")
args = ap.parse_args()
script = os.path.join(args.deploy, "node/cudashim-node.sh")
failures = []
root = tempfile.mkdtemp(prefix="cudashim-node-")
os.chmod(root, 0o755)
LIB = "/opt/cudashim/site/cudashim/lib/libcudashim.so"
staged = root + LIB
os.makedirs(os.path.dirname(staged))
for d in ("opt", "opt/cudashim", "opt/cudashim/site", "opt/cudashim/site/cudashim", "opt/cudashim/site/cudashim/lib"):
    os.chmod(os.path.join(root, d), 0o755)
shutil.copy(args.lib, staged)
os.chmod(staged, 0o755)
os.makedirs(os.path.join(root, "etc"))
os.makedirs(os.path.join(root, "var/tmp"))
preload = os.path.join(root, "etc/ld.so.preload")
policy = os.path.join(root, "etc/cudashim/policy.toml")
node_toml = os.path.join(args.deploy, "policy/node.toml")
clean_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_") and k != "LD_PRELOAD"}


def node(*a):
    return subprocess.run(["bash", script, "--root", root, "--cli", args.cli, *a], env=clean_env, capture_output=True, text=True)


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)
    return cond


def read(p):
    with open(p) as f:
        return f.read()


def mode(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


bad = os.path.join(root, "bad.toml")
with open(bad, "w") as f:
    f.write('[memory]\nmanaged = warn\n')

p = node("enable", LIB)
check("enable without a policy: refused (the reports would go to each job's working folder)",
      p.returncode == 1 and not os.path.exists(preload) and "install-policy first" in p.stderr, p.stderr)
p = node("install-policy", bad)
check("install-policy of a malformed file: refused, nothing installed", p.returncode == 1 and not os.path.exists(policy), p.stderr)
p = node("install-policy", node_toml)
check("install-policy of node.toml: installed, 0644, the same bytes",
      p.returncode == 0 and read(policy) == read(node_toml) and mode(policy) == 0o644, p.stderr)
other = os.path.join(root, "other.toml")
with open(other, "w") as f:
    f.write('[output]\ndir = "/var/tmp/cudashim"\n')
p = node("install-policy", other)
check("a second install keeps the first as policy.toml.prev", p.returncode == 0 and read(policy + ".prev") == read(node_toml))
p = node("rollback-policy")
check("rollback-policy puts it back", p.returncode == 0 and read(policy) == read(node_toml) and not os.path.exists(policy + ".prev"))

with open(preload, "w") as f:
    f.write("# site preloads\n/usr/lib/x86_64-linux-gnu/libother.so\n")
os.chmod(preload, 0o644)
before = read(preload)
os.chmod(os.path.join(root, "opt/cudashim"), 0o757)
p = node("enable", LIB)
check("enable refuses a library in a folder others can write", p.returncode == 1 and read(preload) == before and "can be written" in p.stderr,
      p.stderr)
os.chmod(os.path.join(root, "opt/cudashim"), 0o755)
os.chmod(staged, 0o775)
p = node("enable", LIB)
check("enable refuses a library its group can write", p.returncode == 1 and read(preload) == before, p.stderr)
os.chmod(staged, 0o755)
fake = root + "/opt/fake/libcudashim.so"
os.makedirs(os.path.dirname(fake))
os.chmod(os.path.dirname(fake), 0o755)
with open(fake, "w") as f:
    f.write("not an ELF file\n")
os.chmod(fake, 0o644)
p = node("enable", "/opt/fake/libcudashim.so")
check("enable refuses a library the loader cannot preload (its message is shown)",
      p.returncode == 1 and read(preload) == before and "cannot be preloaded" in p.stderr, p.stderr)
p = node("enable", "opt/cudashim/site/cudashim/lib/libcudashim.so")
check("enable refuses a relative path", p.returncode == 1 and read(preload) == before, p.stderr)

p = node("enable", LIB)
want = f"{LIB}\n# site preloads\n/usr/lib/x86_64-linux-gnu/libother.so\n"
check("enable: the shim first in ld.so.preload, the other lines kept, 0644", p.returncode == 0 and read(preload) == want and mode(preload) == 0o644,
      f"{p.stderr} {read(preload)!r}")
out = os.path.join(root, "var/tmp/cudashim")
check("enable: the reports' folder is 1777", os.path.isdir(out) and mode(out) == 0o1777, oct(mode(out)) if os.path.exists(out) else "missing")
tmpfiles = os.path.join(root, "etc/tmpfiles.d/cudashim.conf")
check("enable: its tmpfiles.d line is deploy/node/tmpfiles.d-cudashim.conf",
      os.path.exists(tmpfiles) and read(tmpfiles) == read(os.path.join(args.deploy, "node/tmpfiles.d-cudashim.conf")))
p = node("enable", LIB)
check("enable twice: the same file (one shim line)", p.returncode == 0 and read(preload) == want, read(preload))
newer = "/opt/cudashim/site2/cudashim/lib/libcudashim.so"
os.makedirs(os.path.dirname(root + newer))
for d in ("opt/cudashim/site2", "opt/cudashim/site2/cudashim", "opt/cudashim/site2/cudashim/lib"):
    os.chmod(os.path.join(root, d), 0o755)
shutil.copy(staged, root + newer)
p = node("enable", newer)
check("enable of another version replaces the line (an upgrade is one rename)",
      p.returncode == 0 and read(preload) == want.replace(LIB, newer), read(preload))
p = node("status")
check("status names the preloaded library and the policy", p.returncode == 0 and f"preload: {newer}" in p.stdout and "passes the check" in p.stdout,
      p.stdout)

shutil.copy(bad, policy)
p = node("enable", LIB)
check("enable refuses while the installed policy does not pass the check", p.returncode == 1 and read(preload) == want.replace(LIB, newer),
      p.stderr)
shutil.copy(node_toml, policy)

p = node("disable")
check("disable: the shim's line goes, the others stay", p.returncode == 0 and read(preload) == before, read(preload))
with open(preload, "w") as f:
    f.write(LIB + "\n")
p = node("disable")
check("disable: a file that held only the shim goes", p.returncode == 0 and not os.path.exists(preload))
p = node("disable")
check("disable with nothing to disable: fine", p.returncode == 0)
p = node("status")
check("status says the preload is off", "preload: off" in p.stdout, p.stdout)
with open(preload, "w") as f:
    f.write(f"/usr/lib/libother.so {LIB}\n")
p = node("enable", LIB)
check("enable refuses an ld.so.preload that names the shim on a line of its own making",
      p.returncode == 1 and read(preload) == f"/usr/lib/libother.so {LIB}\n", p.stderr)
leftovers = [n for n in os.listdir(os.path.join(root, "etc")) if n.startswith(".")]
check("no temporary file is left behind", not leftovers, str(leftovers))

shutil.rmtree(root)
if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: cudashim-node.sh installs, refuses and rolls back as it should")
