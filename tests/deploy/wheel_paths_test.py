#!/usr/bin/env python3
"""wheel_paths_test.py WHEEL DEPLOY_DIR: the recipes' paths are the wheel's. The wheel this
tree built, pip-installed with --target (as the Dockerfile, the node-wide and the Slurm
recipes do), puts the library and the CLI exactly where deploy/ points: the Dockerfile's
LD_PRELOAD and its checks, the pods' LD_PRELOAD, the TaskProlog's default CUDASHIM_LIB, the
sbatch script's paths under CUDASHIM_HOME; `cudashim.library_path()` of that install says
the same; the loader preloads that library into /bin/true silently; its CLI checks the
policies of deploy/. Skipped (77) without the wheel or pip."""
import os
import re
import subprocess
import sys
import tempfile

wheel, deploy = sys.argv[1], os.path.abspath(sys.argv[2])
if not os.path.isfile(wheel):
    print(f"skip: no wheel at {wheel} (this tree builds none)")
    sys.exit(77)
if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode != 0:
    print(f"skip: {sys.executable} has no pip")
    sys.exit(77)
failures = []


def check(name, cond, detail=""):
    print(f"{'ok' if cond else 'FAIL'}: {name}{'' if cond else ': ' + detail}")
    if not cond:
        failures.append(name)
    return cond


def read(rel):
    with open(os.path.join(deploy, rel)) as f:
        return f.read()


SITE = "/opt/cudashim/site"
with tempfile.TemporaryDirectory() as tmp:
    site = tmp + SITE
    p = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-compile",
                        "--disable-pip-version-check", "--target", site, wheel], capture_output=True, text=True)
    if not check("pip install --target of the wheel", p.returncode == 0, p.stderr):
        sys.exit(1)
    lib_rel = "cudashim/lib/libcudashim.so"
    cli_rel = "cudashim/bin/cudashim"
    lib, cli = f"{SITE}/{lib_rel}", f"{SITE}/{cli_rel}"
    check(f"the wheel puts the library at DIR/{lib_rel}", os.path.isfile(tmp + lib))
    check(f"the wheel puts the CLI at DIR/{cli_rel}, executable", os.access(tmp + cli, os.X_OK))

    dockerfile = read("docker/Dockerfile")
    check("Dockerfile: LD_PRELOAD is the installed library", f"LD_PRELOAD={lib}$" in dockerfile)
    check("Dockerfile: checks the installed library and CLI", f"test -f {lib}" in dockerfile and f"test -x {cli}" in dockerfile)
    check("Dockerfile: links the installed CLI", f"ln -sf {cli} " in dockerfile)
    for pod in ("k8s/pod-image.yaml", "k8s/pod-initcontainer.yaml"):
        values = re.findall(r"name: LD_PRELOAD\s+value: (\S+)", read(pod))
        check(f"{pod}: LD_PRELOAD is the installed library", values == [lib], str(values))
    check("task_prolog.sh: the default CUDASHIM_LIB is the installed library",
          f"CUDASHIM_LIB=${{CUDASHIM_LIB:-{lib}}}" in read("slurm/task_prolog.sh"))
    sbatch = read("slurm/train.sbatch")
    check("train.sbatch: the library and the CLI under CUDASHIM_HOME (a --target folder)",
          f"$CUDASHIM_HOME/{lib_rel}" in sbatch and f"$CUDASHIM_HOME/{cli_rel}" in sbatch)

    p = subprocess.run([sys.executable, "-c", "import cudashim; print(cudashim.library_path())"],
                       env={"PATH": "/usr/bin:/bin", "PYTHONPATH": site}, capture_output=True, text=True)
    check("cudashim.library_path() of that install is the same file", p.stdout.strip() == tmp + lib, f"{p.stdout!r} {p.stderr!r}")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CUDASHIM_") and k != "LD_PRELOAD"}
    p = subprocess.run(["/bin/true"], env={**clean, "LD_PRELOAD": tmp + lib}, capture_output=True, text=True)
    check("the loader preloads the installed library into /bin/true silently", p.returncode == 0 and p.stderr == "", p.stderr)
    for pol in ("policy/node.toml", "policy/container.toml"):
        p = subprocess.run([tmp + cli, "policy", "check", os.path.join(deploy, pol)], env=clean, capture_output=True, text=True)
        check(f"the installed CLI passes {pol}", p.returncode == 0, p.stderr)

if failures:
    print(f"FAIL: {len(failures)} check(s): {failures}")
    sys.exit(1)
print("ok: the recipes' paths are where the wheel installs")
