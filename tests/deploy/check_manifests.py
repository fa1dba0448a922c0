#!/usr/bin/env python3
"""check_manifests.py --cli CLI --layers POLICY_LAYERS DEPLOY_DIR: the container recipes.

- every YAML file of deploy/k8s parses (PyYAML; exit 77, a skip, without it);
- each Pod: every container that runs the job has LD_PRELOAD naming a libcudashim.so that a
  volume or the image provides, CUDASHIM_POLICY naming a file the ConfigMap projects,
  CUDASHIM_OUT on a writable volume (and any $(VAR) it uses defined before it); the policy
  ConfigMap is mounted read-only at /etc/cudashim with items whose keys the ConfigMap has;
  every volumeMount names a volume and every claim a PersistentVolumeClaim of the folder;
  the initContainer copies the installed package to where LD_PRELOAD looks for it;
- the ConfigMap's policy.toml is deploy/policy/container.toml, byte for byte, and its
  policies pass `cudashim policy check` one by one and together (policy.toml as the
  administrator's file, job.toml as CUDASHIM_POLICY) with no error and no warning;
- deploy/docker/Dockerfile installs the wheel with pip into the folder the manifests'
  LD_PRELOAD points into, sets LD_PRELOAD to the same path, and copies a policy file that
  passes the check.
"""
import argparse
import os
import posixpath
import re
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("skip: PyYAML is not installed (python3 -c 'import yaml' fails; Debian: python3-yaml): the manifests are not checked")
    sys.exit(77)

ap = argparse.ArgumentParser()
ap.add_argument("--cli", required=True)
ap.add_argument("--layers", required=True)
ap.add_argument("deploy")
args = ap.parse_args()
k8s = os.path.join(args.deploy, "k8s")
failures = []
SITE = "/opt/cudashim/site"          # where the Dockerfile installs the wheel
LIB_IN_SITE = "cudashim/lib/libcudashim.so"
clean_env = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_")}


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)
    return cond


# --- parse everything
docs = []
for name in sorted(os.listdir(k8s)):
    if not name.endswith((".yaml", ".yml")):
        continue
    path = os.path.join(k8s, name)
    try:
        with open(path) as f:
            for d in yaml.safe_load_all(f):
                if d is not None:
                    docs.append((name, d))
        check(f"{name} parses", True)
    except yaml.YAMLError as e:
        check(f"{name} parses", False, str(e))
for name, d in docs:
    check(f"{name}: {d.get('kind')} has apiVersion, kind and metadata.name",
          isinstance(d, dict) and d.get("apiVersion") and d.get("kind") and d.get("metadata", {}).get("name"))

configmaps = {d["metadata"]["name"]: d for _, d in docs if d.get("kind") == "ConfigMap"}
claims = {d["metadata"]["name"] for _, d in docs if d.get("kind") == "PersistentVolumeClaim"}
pods = [(n, d) for n, d in docs if d.get("kind") == "Pod"]
check("the folder has the policy ConfigMap, a claim for the reports and pods", "cudashim-policy" in configmaps and claims and pods,
      f"{list(configmaps)} {claims} {len(pods)}")
cm = configmaps.get("cudashim-policy", {"data": {}})
cm_data = cm.get("data", {})


def env_of(c):
    return {e["name"]: e for e in c.get("env", [])}


def under(path, mount):
    return path == mount or path.startswith(mount.rstrip("/") + "/")


image_ld_preload = set()
for pname, pod in pods:
    spec = pod["spec"]
    volumes = {v["name"]: v for v in spec.get("volumes", [])}
    inits = spec.get("initContainers", [])
    for c in inits + spec.get("containers", []):
        for m in c.get("volumeMounts", []):
            check(f"{pname}/{c['name']}: mount {m['mountPath']} names a volume of the pod", m["name"] in volumes, m["name"])
    for vname, v in volumes.items():
        if "persistentVolumeClaim" in v:
            check(f"{pname}: volume {vname} claims a PersistentVolumeClaim of the folder", v["persistentVolumeClaim"]["claimName"] in claims)
        if "configMap" in v:
            ref = v["configMap"]["name"]
            check(f"{pname}: volume {vname} is a ConfigMap of the folder", ref in configmaps, ref)
            for item in v["configMap"].get("items", []):
                check(f"{pname}: volume {vname} projects key {item['key']}, which the ConfigMap has",
                      item["key"] in configmaps.get(ref, {}).get("data", {}))

    for c in spec.get("containers", []):
        cn = f"{pname}/{c['name']}"
        env = env_of(c)
        mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
        # LD_PRELOAD
        if not check(f"{cn}: LD_PRELOAD is set in the pod spec", "LD_PRELOAD" in env and env["LD_PRELOAD"].get("value")):
            continue
        preload = env["LD_PRELOAD"]["value"]
        check(f"{cn}: LD_PRELOAD is an absolute path to libcudashim.so", re.fullmatch(r"/\S+/libcudashim\.so", preload) is not None, preload)
        # the policy ConfigMap at /etc/cudashim
        pm = mounts.get("/etc/cudashim")
        pv = volumes.get(pm["name"]) if pm else None
        check(f"{cn}: the policy ConfigMap is mounted at /etc/cudashim, read-only",
              pm is not None and pv is not None and pv.get("configMap", {}).get("name") == "cudashim-policy" and pm.get("readOnly") is True)
        projected = {i["path"] for i in (pv or {}).get("configMap", {}).get("items", [])} or set(cm_data)
        check(f"{cn}: /etc/cudashim/policy.toml comes from the ConfigMap", "policy.toml" in projected, str(projected))
        # CUDASHIM_POLICY
        pol = env.get("CUDASHIM_POLICY", {}).get("value", "")
        check(f"{cn}: CUDASHIM_POLICY names a file the ConfigMap projects at /etc/cudashim",
              posixpath.dirname(pol) == "/etc/cudashim" and posixpath.basename(pol) in projected and posixpath.basename(pol) != "policy.toml",
              pol)
        # CUDASHIM_OUT on a writable volume, its $(VAR)s defined before it
        outv = env.get("CUDASHIM_OUT", {}).get("value", "")
        names = [e["name"] for e in c.get("env", [])]
        refs = re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", outv)
        check(f"{cn}: CUDASHIM_OUT's $(VAR)s are defined before it",
              all(r in names and names.index(r) < names.index("CUDASHIM_OUT") for r in refs), f"{outv} {names}")
        om = [m for mp, m in mounts.items() if under(outv, mp)]
        check(f"{cn}: CUDASHIM_OUT lies on a writable volume, one folder below its mount (the shim makes only the last one)",
              len(om) == 1 and not om[0].get("readOnly") and posixpath.dirname(outv) == om[0]["mountPath"].rstrip("/"), outv)
        check(f"{cn}: the container asks for a GPU", "nvidia.com/gpu" in c.get("resources", {}).get("limits", {}))
        # where LD_PRELOAD's file comes from
        lm = [m for mp, m in mounts.items() if under(preload, mp)]
        if not lm:
            check(f"{cn}: LD_PRELOAD is the Dockerfile's install path (the shim from the image)", preload == f"{SITE}/{LIB_IN_SITE}", preload)
            image_ld_preload.add(preload)
            continue
        m = lm[0]
        check(f"{cn}: the volume holding the library is mounted read-only", m.get("readOnly") is True)
        vol = m["name"]
        writers = [(i, im) for i in inits for im in i.get("volumeMounts", []) if im["name"] == vol]
        if not check(f"{cn}: an initContainer fills the library's volume {vol}", len(writers) == 1, str(writers)):
            continue
        init, im = writers[0]
        cmd = init.get("command", []) + init.get("args", [])
        ok = len(cmd) == 4 and cmd[0] == "cp" and cmd[1] in ("-R", "-r", "-a")
        if check(f"{pname}/{init['name']}: copies one folder with cp -R", ok, str(cmd)):
            src, dst = cmd[2], cmd[3]
            check(f"{pname}/{init['name']}: copies the Dockerfile's install folder {SITE}, whole", src == SITE, src)
            check(f"{pname}/{init['name']}: copies into its mount of {vol}", under(dst.rstrip("/"), im["mountPath"]), f"{dst} {im['mountPath']}")
            rel = posixpath.relpath(dst.rstrip("/"), im["mountPath"])
            landed = posixpath.normpath(posixpath.join(m["mountPath"], rel, posixpath.basename(src), LIB_IN_SITE))
            check(f"{cn}: LD_PRELOAD is where the initContainer's copy puts the library ({landed})", preload == landed, preload)
        check(f"{pname}/{init['name']}: the copying container itself runs without LD_PRELOAD", "LD_PRELOAD" not in env_of(init))

# --- the ConfigMap's policies
container_toml = os.path.join(args.deploy, "policy/container.toml")
with open(container_toml) as f:
    check("the ConfigMap's policy.toml is deploy/policy/container.toml, byte for byte", cm_data.get("policy.toml") == f.read())
with tempfile.TemporaryDirectory() as tmp:
    files = {}
    for key, text in cm_data.items():
        files[key] = os.path.join(tmp, key)
        with open(files[key], "w") as f:
            f.write(text)
        p = subprocess.run([args.cli, "policy", "check", files[key]], env=clean_env, capture_output=True, text=True)
        check(f"ConfigMap key {key} passes `cudashim policy check`", p.returncode == 0 and "error" not in p.stderr,
              f"exit {p.returncode}: {p.stderr.strip()}")
    if "policy.toml" in files and "job.toml" in files:
        p = subprocess.run([args.layers, files["policy.toml"], f"CUDASHIM_POLICY={files['job.toml']}"], capture_output=True, text=True)
        check("policy.toml (administrator's) and job.toml (CUDASHIM_POLICY) load together: no error, no value refused",
              p.returncode == 0, p.stdout)
        eff = {l.split("=")[0].strip(): l for l in p.stdout.splitlines() if "=" in l}
        check("together, job.toml's stricter values hold", '"deny"' in eff.get("memory.managed", "") and "job.toml" in eff.get("memory.managed", ""),
              eff.get("memory.managed", ""))
        check("together, policy.toml's lock holds", '"1"' in eff.get("policy.locked", ""), eff.get("policy.locked", ""))

# --- the Dockerfile
dockerfile = os.path.join(args.deploy, "docker/Dockerfile")
with open(dockerfile) as f:
    text = f.read()
logical = re.sub(r"\\\n", " ", "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#")))
stages = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", logical, re.M | re.I)
check("Dockerfile: stages wheel, shim and train (the last, the default)", [s[1] for s in stages] == ["wheel", "shim", "train"], str(stages))
check("Dockerfile: pip installs the wheel with --target " + SITE,
      re.search(r"pip install\b[^\n]*--target " + re.escape(SITE) + r"\s[^\n]*cudashim-\*\.whl", logical) is not None)
m = re.search(r"^ENV\s+(.*)$", logical, re.M)
envs = dict(re.findall(r"(\w+)=(\S+)", m.group(1))) if m else {}
check("Dockerfile: ENV LD_PRELOAD puts the installed library first, the base image's after it",
      envs.get("LD_PRELOAD") == f"{SITE}/{LIB_IN_SITE}" + "${LD_PRELOAD:+:${LD_PRELOAD}}", str(envs))
for p in image_ld_preload:
    check("Dockerfile: the pod-image manifest's LD_PRELOAD is the image's", envs.get("LD_PRELOAD", "").startswith(p + "$"), p)
check("Dockerfile: ENV comes after the last RUN (no build step runs under the shim)",
      logical.rfind("\nENV ") > logical.rfind("\nRUN "))
for src, dst in re.findall(r"^COPY\s+(?!--from)(\S+)\s+(\S+)", logical, re.M):
    if dst == "/etc/cudashim/policy.toml":
        path = os.path.join(args.deploy, "..", src)
        p = subprocess.run([args.cli, "policy", "check", path], env=clean_env, capture_output=True, text=True)
        check(f"Dockerfile: the policy it copies ({src}) passes `cudashim policy check`", p.returncode == 0, p.stderr.strip())
        break
else:
    check("Dockerfile: copies a policy to /etc/cudashim/policy.toml", False)

if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: the Kubernetes manifests and the Dockerfile hold together")
