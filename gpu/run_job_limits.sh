#!/usr/bin/env bash
# run_job_limits.sh: issue 37's job-side defects, on the GPU host with a real torch job (the CPU
# tests, preload.job_limits.*, use the test double). From the repository root, after the wheel
# is installed by gpu/run_after_merge.sh (CLI=<its cudashim>), or with CLI set by hand:
#   stacks   a torch job that has initialised CUDA starts 8 Python threads with 32 KiB stacks
#            (threading.stack_size's smallest) and 8 native threads with 16 KiB stacks (ctypes
#            pthread_create); with and without the shim: the same "threads ok" line
#   fsize    a 300-step torch training loop under `ulimit -f 64`, SIGXFSZ at its default action
#            (the loop sets it: CPython itself starts with SIGXFSZ ignored):
#            exit 0 as without the shim, no temporary file, every output over 64 KiB named
#   fork     the loop's parent forks 4 children that make no CUDA call and end with os._exit
#            (a DataLoader worker's end): exit 0, one report (the parent's), no hang
# Writes $OUT/job_limits.md (the table) and each run's stderr.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-/tmp/cudashim-job-limits}
CLI=${CLI:?set CLI to the cudashim executable}
mkdir -p "$OUT"
SHIM=${SHIM:-$(dirname "$(dirname "$CLI")")/lib/libcudashim.so}  # the wheel's cudashim/bin and cudashim/lib
[ -f "$SHIM" ] || { echo "run_job_limits: no $SHIM; set SHIM" >&2; exit 1; }
row() { echo "| $* |" >> "$OUT/job_limits.md"; }
echo "| case | without the shim | with the shim | outputs |" > "$OUT/job_limits.md"
echo "|---|---|---|---|" >> "$OUT/job_limits.md"

cat > "$OUT/stacks.py" <<'EOF'
import ctypes, threading, torch
torch.zeros(1, device="cuda"); torch.cuda.synchronize()
threading.stack_size(32768)
ts = [threading.Thread(target=lambda: None) for _ in range(8)]
for t in ts: t.start()
for t in ts: t.join()
libc = ctypes.CDLL(None)
attr = ctypes.create_string_buffer(64)  # pthread_attr_t is 56 bytes on x86-64 and aarch64
assert libc.pthread_attr_init(attr) == 0 and libc.pthread_attr_setstacksize(attr, ctypes.c_size_t(16384)) == 0
fails = 0
for _ in range(8):  # the start routine is libc's getpid: no Python on a 16 KiB stack
    tid = ctypes.c_ulong()
    r = libc.pthread_create(ctypes.byref(tid), attr, ctypes.cast(libc.getpid, ctypes.c_void_p), None)
    fails += r != 0
    if r == 0: libc.pthread_join(tid, None)
print(f"threads ok: 8 Python threads of 32 KiB; native 16 KiB threads failed: {fails} of 8")
EOF

cat > "$OUT/loop.py" <<'EOF'
import os, signal, sys, torch
signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # CPython ignores it; a C or C++ job has the default (issue 37.2)
m = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)]).cuda()
opt = torch.optim.SGD(m.parameters(), lr=1e-3)
for step in range(300):
    x = torch.randn(64, 256, device="cuda")
    loss = m(x).square().mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 50 == 0: print(f"step {step} loss {loss.item():.4f}")
if len(sys.argv) > 1 and sys.argv[1] == "fork":
    pids = []
    for k in range(4):
        pid = os.fork()
        if pid == 0:
            sum(range(100000)); os._exit(0)
        pids.append(pid)
    print("children", [os.waitstatus_to_exitcode(os.waitpid(p, 0)[1]) for p in pids])
EOF

run_case() {  # name, shell command prefix (ulimit), python args
  local name=$1 pre=$2; shift 2
  local o0=$OUT/$name-plain o1=$OUT/$name-shim
  mkdir -p "$o0" "$o1"
  (eval "$pre"; trap - XFSZ; timeout -k 5 120 python3 "$@") > "$o0/stdout" 2> "$o0/stderr"; local rc0=$?
  (eval "$pre"; trap - XFSZ; CUDASHIM_OUT=$o1/out LD_PRELOAD=$SHIM timeout -k 5 120 python3 "$@") > "$o1/stdout" 2> "$o1/stderr"; local rc1=$?
  local files; files=$(ls "$o1/out" 2>/dev/null | sed 's/cudashim-[^-]*-//' | tr '\n' ' ')
  local said; said=$(grep -c "file-size limit" "$o1/stderr")
  row "$name | exit $rc0: $(tail -n 1 "$o0/stdout") | exit $rc1: $(tail -n 1 "$o1/stdout") | $files($said lines naming the file-size limit)"
}
run_case stacks "" "$OUT/stacks.py"
run_case fsize "ulimit -f 64" "$OUT/loop.py"
run_case fork "" "$OUT/loop.py" fork
cat "$OUT/job_limits.md"
