#!/usr/bin/env python3
"""check_exports.py [--nm TOOL] LIB CLI: libcudashim.so exports exactly its hooks + dl* + cudashim_* API.

The allowlist is generated, not written: `cudashim hooks --names` prints the rows of
catalog/hooks.def. Anything else exported (a libstdc++ symbol, a helper that lost
its hidden visibility) or any hook not exported fails the test, naming the symbols.
--nm: the nm that reads LIB (the AArch64 tree passes aarch64-linux-gnu-nm, and CLI is
its qemu wrapper, tests/aarch64/qemu_exec.c).
"""
import subprocess
import sys

args = sys.argv[1:]
nm = "nm"
if args[:1] == ["--nm"]:
    nm, args = args[1], args[2:]
lib, cli = args[0], args[1]
out = subprocess.run([nm, "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
exported = {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}
hooks = set(subprocess.run([cli, "hooks", "--names"], check=True, capture_output=True, text=True).stdout.split())
allowed = hooks | {"dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym", "_exit", "_Exit", "kill"} | {
    "execve", "execv", "execvp", "execvpe", "fexecve", "execl", "execlp", "execle"} | {
    "cudashim_version", "cudashim_write_report", "cudashim_api_calls",
    "cudashim_set_call_sites"} | {
    # CUPTI's client entry points: the precise mode stands aside for a profiler (shim/cupti_hooks.cpp)
    "cuptiActivityRegisterCallbacks", "cuptiActivityEnable", "cuptiActivityEnableContext", "cuptiSubscribe"}
extra = sorted(exported - allowed)
missing = sorted(allowed - exported)
if extra or missing:
    if extra:
        print(f"FAIL: {lib} exports {len(extra)} symbol(s) outside the allowlist: {extra[:40]}")
    if missing:
        print(f"FAIL: {lib} does not export {len(missing)} hook(s): {missing[:40]}")
    sys.exit(1)
print(f"ok: {len(exported)} exported symbols = {len(hooks)} hooks (NVML's 2 included) + 5 dl* + 3 cudashim_* API")
