#!/usr/bin/env python3
"""selfcost_run.py SELFCOST_PY CLI FAKECUDA_DIR: the selfcost GPU step's machinery end to end on the
runtime test double (bench/selfcost.py run --cpu, issue 33.4): one bare and one shim worker start,
take turns for a few seconds and quit; every block has its steps, the table has its verdict
line, and the shim worker's report gave self_cost with its steady share and the flush thread's
parts (the GPU step reads them from there); --cpus pins both workers (the shim's through
`cudashim run`) to the one CPU asked. A command that is not one gets a clear error.
"""
import json
import os
import subprocess
import sys
import tempfile


def main():
    script, cli, fake = sys.argv[1:4]
    errors = []
    pin = max(os.sched_getaffinity(0))  # every worker pinned to this one CPU
    with tempfile.TemporaryDirectory() as out:
        p = subprocess.run([sys.executable, script, "run", "--cli", cli, "--out", out, "--pairs", "1", "--seconds", "3",
                            "--warm", "1.2", "--block", "12", "--drop", "2", "--prep", "8000", "--cpu", fake,
                            "--cpus", str(pin)],
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            print(f"FAIL: run exited {p.returncode}: {p.stdout[-2000:]} {p.stderr[-2000:]}")
            return 1
        doc = json.load(open(os.path.join(out, "selfcost.json")))
        units = [u for row in doc["rounds"] for u in row]
        if len(units) < 2:
            errors.append(f"{len(units)} units in 3 s")
        for u in units:
            if len(u["bare"]) != 12 or len(u["shim"]) != 12 or min(u["bare"] + u["shim"]) <= 0:
                errors.append(f"a unit's blocks are not 12 positive step times: {u}")
                break
        got = sorted((w["side"], w["cpus"]) for w in doc.get("workers", []))
        if got != [("bare", [pin]), ("shim", [pin])]:
            errors.append(f"the workers were not pinned to CPU {pin}: {got}")
        cost = (doc.get("self_cost") or [None])[0]
        if not cost:
            errors.append("no self_cost from the shim worker's report")
        else:
            if cost["steady"]["rounds"] < 2:
                errors.append(f"steady over {cost['steady']['rounds']} flush rounds in ~5 s: {cost['steady']}")
            for part in ("library_watch", "gpu_sampler", "judge_sites", "snapshot", "sleep_and_wake"):
                if part not in cost["parts"] or cost["parts"][part]["runs"] < 1:
                    errors.append(f"part {part} missing or never ran: {sorted(cost['parts'])}")
        text = open(os.path.join(out, "selfcost.md")).read()
        if "settled: shim costs" not in text or "| gpu_sampler |" not in text or f"pinned to CPUs {pin} " not in text:
            errors.append(f"the table lacks its verdict or its parts:\n{text}")
    with tempfile.TemporaryDirectory() as out:
        # A worker told something that is not a command says so, and keeps serving.
        env = dict(os.environ, LD_LIBRARY_PATH=fake)
        cudart = sorted(f for f in os.listdir(fake) if f.startswith("libcudart.so"))[0]
        k = subprocess.run([sys.executable, script, "child", "--warm", "0", "--prep", "800", "--cpu", os.path.join(fake, cudart)],
                           input="walk 3\nrun 2\nquit\n", capture_output=True, text=True, env=env, timeout=60)
        lines = [json.loads(l) for l in k.stdout.splitlines() if l.startswith("{")]
        if k.returncode != 0 or len(lines) != 3 or "walk 3" not in lines[1].get("error", "") or len(lines[2].get("times_us", [])) != 2:
            errors.append(f"child protocol: exit {k.returncode}, {lines}, {k.stderr[-500:]}")
    for e in errors:
        print("FAIL: " + e)
    if errors:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
