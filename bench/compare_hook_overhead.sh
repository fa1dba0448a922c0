#!/usr/bin/env bash
# compare_hook_overhead.sh: the hook-overhead benchmark (bench/hook_overhead.cpp) of two trees, side by
# side in one run, and bench/results/hook_overhead-compare-cpu.md.
#
#   bench/compare_hook_overhead.sh BASE_REV [benchmark options]      e.g. 08a5419 --rounds 101 --calls 2000
#
# Builds bench_hook_overhead, the preload library and the test-double driver in Release (-O2), as
# bench/run_hook_overhead.sh does, twice: this tree (its working tree, uncommitted changes included)
# into build-bench/, and BASE_REV, checked out with `git worktree add --detach` into
# build-bench-base/src (reused by later runs, moved to the new BASE_REV), into build-bench-base/build.
# Both are ignored by the /build*/ pattern of .gitignore. Then runs the two builds' benchmark in
# alternating processes (base, new, new, base, ...; COMPARE_ROUNDS each, default 9), each with the
# benchmark options given, reads every figure the benchmark prints (its Markdown: the table's direct,
# through-shim and added medians, the paired-difference quantiles, the clock_gettime reference) and
# writes a table: per figure, the median over processes of base and new, new/base, and the min-max of
# each. Prints it. Informs only: exit 0 unless a build or a run fails.
#
# Environment: COMPARE_ROUNDS (processes per side, default 9); NEW_ROOT (the tree measured as "new",
# default this repository: another checkout measures that one, e.g. BASE_REV against itself as a
# self-check); CUDASHIM_CUDA_INCLUDE (as for run_hook_overhead.sh); COMPARE_OUT (default
# bench/results/hook_overhead-compare-cpu.md); COMPARE_JOBS (build jobs, default nproc);
# COMPARE_BASE_BUILD and COMPARE_NEW_BUILD (folders holding bin/bench_hook_overhead, lib/libcudashim.so
# and fakecuda/ already built: that side is measured as it is, not built; BASE_REV still labels it).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
BASE_REV=$1
shift
NEW_ROOT=$(cd "${NEW_ROOT:-$ROOT}" && pwd)
ROUNDS=${COMPARE_ROUNDS:-9}
JOBS=${COMPARE_JOBS:-$(nproc)}
OUT=${COMPARE_OUT:-$ROOT/bench/results/hook_overhead-compare-cpu.md}
NEW_BUILD=$NEW_ROOT/build-bench
BASE_DIR=$ROOT/build-bench-base
BASE_SRC=$BASE_DIR/src
BASE_BUILD=$BASE_DIR/build
t_start=$(date +%s)

base_commit=$(git -C "$ROOT" rev-parse --verify --quiet "$BASE_REV^{commit}") || {
  echo "compare_hook_overhead: $BASE_REV is not a commit of $ROOT" >&2
  exit 2
}

# The base tree: a detached worktree, reused when it is there already.
if [ -n "${COMPARE_BASE_BUILD:-}" ]; then
  BASE_SRC=$COMPARE_BASE_BUILD
elif [ -e "$BASE_SRC/.git" ]; then
  git -C "$BASE_SRC" checkout -q --detach "$base_commit"
else
  mkdir -p "$BASE_DIR"
  git -C "$ROOT" worktree prune
  git -C "$ROOT" worktree add -q --detach "$BASE_SRC" "$base_commit"
fi

build() {  # build SRC BUILD
  local args=(-S "$1" -B "$2" -DCMAKE_BUILD_TYPE=Release
    "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O2 -DNDEBUG")
  [ -n "${CUDASHIM_CUDA_INCLUDE:-}" ] && args+=("-DCUDASHIM_CUDA_INCLUDE=$CUDASHIM_CUDA_INCLUDE")
  command -v ninja >/dev/null && [ ! -f "$2/CMakeCache.txt" ] && args+=(-G Ninja)
  echo "compare_hook_overhead: building $1 into $2" >&2
  cmake "${args[@]}" >/dev/null
  cmake --build "$2" -j"$JOBS" --target bench_hook_overhead cudashim_preload fakecuda >/dev/null
}
if [ -n "${COMPARE_BASE_BUILD:-}" ]; then BASE_BUILD=$COMPARE_BASE_BUILD; else build "$BASE_SRC" "$BASE_BUILD"; fi
if [ -n "${COMPARE_NEW_BUILD:-}" ]; then NEW_BUILD=$COMPARE_NEW_BUILD; else build "$NEW_ROOT" "$NEW_BUILD"; fi
t_built=$(date +%s)

label() {  # label TREE: short hash, and whether what is measured has uncommitted changes
  local c
  c=$(git -C "$1" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$1" --no-optional-locks status --porcelain -- shim recorder policy report symbols catalog tests/fakecuda bench ':!bench/results' CMakeLists.txt 2>/dev/null)" ]; then
    c="$c (+ uncommitted changes)"
  fi
  echo "$c"
}
base_label=$(git -C "$ROOT" rev-parse --short "$base_commit")
new_label=$(label "$NEW_ROOT")
shown_new_root=$NEW_ROOT
if [ -n "${COMPARE_NEW_BUILD:-}" ]; then  # measured as it was built: no tree's state says what it is
  new_label="prebuilt"
  shown_new_root=$COMPARE_NEW_BUILD
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bench_args=("$@")
# Where a process's strings lie moves the double's alloc+free timing a lot: the same binaries gave
# 59, 74 and 81 ns direct from folders whose paths differed only in length (08a5419), and 60 to 139 ns
# with one more environment variable. So each round copies both builds' three files (benchmark,
# preload library, double) into two folders of one path length (.../A and .../B, so argv, the
# environment and every loaded path have the same lengths on both sides), a length that changes
# from round to round: each side's median is over several placements, the same ones for both.
pad() { printf '%*s' "$1" '' | tr ' ' x; }
stage() {  # stage BUILD DEST
  mkdir -p "$2/bin" "$2/lib" "$2/fakecuda"
  cp "$1/bin/bench_hook_overhead" "$2/bin/"
  cp "$1/lib/libcudashim.so" "$2/lib/"
  cp -a "$1/fakecuda/"libcuda.so* "$2/fakecuda/"
}
for ((i = 1; i <= ROUNDS; i++)); do
  echo "compare_hook_overhead: round $i/$ROUNDS" >&2
  place=$work/p$(pad $((8 * (i - 1))))
  stage "$BASE_BUILD" "$place/A"
  stage "$NEW_BUILD" "$place/B"
  # alternate which side goes first, so that neither always follows the other
  if ((i % 2)); then order=(base head); else order=(head base); fi
  for side in "${order[@]}"; do
    if [ "$side" = base ]; then b=$place/A; else b=$place/B; fi
    mkdir -p "$work/r-$side-$i"
    LD_PRELOAD="$b/lib/libcudashim.so" LD_LIBRARY_PATH="$b/fakecuda" CUDASHIM_OUT="$work/r-$side-$i" \
      "$b/bin/bench_hook_overhead" --commit "$side" ${bench_args[@]+"${bench_args[@]}"} \
      >"$work/$side-$i.md" 2>"$work/$side-$i.err" || {
      echo "compare_hook_overhead: the $side benchmark failed (round $i):" >&2
      cat "$work/$side-$i.err" >&2
      exit 1
    }
  done
  rm -rf "$place"
done
t_end=$(date +%s)

mkdir -p "$(dirname "$OUT")"
cmd="bench/compare_hook_overhead.sh $BASE_REV${*:+ $*}"
[ "$NEW_ROOT" != "$ROOT" ] && cmd="NEW_ROOT=$NEW_ROOT $cmd"
[ "$ROUNDS" != 9 ] && cmd="COMPARE_ROUNDS=$ROUNDS $cmd"
[ -n "${COMPARE_NEW_BUILD:-}" ] && cmd="COMPARE_NEW_BUILD=$COMPARE_NEW_BUILD $cmd"
[ -n "${COMPARE_BASE_BUILD:-}" ] && cmd="COMPARE_BASE_BUILD=$COMPARE_BASE_BUILD $cmd"
python3 - "$work" "$ROUNDS" "$base_label" "$new_label" "$BASE_SRC" "$shown_new_root" "$cmd" \
  "$((t_built - t_start))" "$((t_end - t_built))" >"$OUT.tmp" <<'PY'
import datetime, glob, os, re, statistics, sys
work, rounds, base_label, new_label, base_src, new_root, cmd, t_build, t_run = sys.argv[1:10]
rounds = int(rounds)

def parse(path):
    """Every figure of one benchmark output: name -> ns, in the order printed; and the header."""
    rows, head, table = {}, {}, None
    for line in open(path):
        line = line.rstrip("\n")
        m = re.match(r"- (\w[\w ]*?): (.*)$", line)
        if m:
            head[m.group(1)] = m.group(2)
        m = re.search(r"clock_gettime\(CLOCK_MONOTONIC\) read .* takes ([0-9.]+) ns", line)
        if m:
            rows["host reference: one clock_gettime read"] = float(m.group(1))
        if line.startswith("| operation | ABIs |"):
            table = "main"
            continue
        if line.startswith("| operation | p25 |"):
            table = "diff"
            continue
        if not line.startswith("|") or line.startswith("|---"):
            if not line.startswith("|"):
                table = None if line.strip() else table
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if table == "main" and len(cells) >= 6:
            op = cells[0]
            rows[f"{op}: through shim"] = float(cells[3])
            rows[f"{op}: added (shim - direct)"] = float(cells[4])
            rows[f"{op}: direct"] = float(cells[2])
            rows[f"{op}: ratio shim/direct"] = float(cells[5])
        elif table == "diff" and len(cells) == 4:
            op = cells[0]
            for q, v in zip(("p25", "median", "p75"), cells[1:]):
                rows[f"{op}: paired diff {q}"] = float(v)
    return rows, head

runs = {side: [parse(os.path.join(work, f"{f}-{i}.md")) for i in range(1, rounds + 1)]
        for side, f in (("base", "base"), ("new", "head"))}
names = list(runs["base"][0][0])
for n in runs["new"][0][0]:
    if n not in names:
        names.append(n)
order = lambda n: (0 if "through shim" in n else 1 if "added" in n else 2 if "direct" in n else
                   3 if "paired" in n else 4 if "ratio" in n else 5)
ops = []
for n in names:
    op = n.split(":")[0]
    if op not in ops:
        ops.append(op)
names = sorted(names, key=lambda n: (ops.index(n.split(":")[0]), order(n)))

def fmt(v, ratio=False):
    return "-" if v is None else (f"{v:.2f}" if ratio else f"{v:.1f}")

bh, nh = runs["base"][0][1], runs["new"][0][1]
now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
print("# cudashim hook overhead, base vs new (CPU, test-double driver)\n")
print(f"- date: {now}")
print(f"- base: {base_label} ({base_src}); new: {new_label} ({new_root})")
print(f"- command: `{cmd}`")
print(f"- machine: {bh.get('host CPU', '?')}")
print(f"- build (both): base {bh.get('build', '?')}; new {nh.get('build', '?')}")
print(f"- per process: {bh.get('method', '?')}")
print(f"- method: {rounds} processes per side, alternating (base new, new base, ...); each figure is that process's "
      f"median (ns per call, as the benchmark prints it); below, the median over the {rounds} processes and the "
      f"min-max; new/base = ratio of those medians")
print(f"- placement: each round copies both builds' benchmark, preload library and double into two folders of one "
      f"path length (8 bytes longer each round), so that argv, the environment and the loaded paths have the same "
      f"lengths on both sides: the double's alloc+free timing moves with them")
print(f"- time: builds {t_build} s, runs {t_run} s\n")
print("| row | base median ns | new median ns | new/base | base spread (min-max) | new spread (min-max) |")
print("|---|---:|---:|---:|---:|---:|")
for n in names:
    b = [r[0][n] for r in runs["base"] if n in r[0]]
    w = [r[0][n] for r in runs["new"] if n in r[0]]
    is_ratio = "ratio" in n
    mb = statistics.median(b) if b else None
    mw = statistics.median(w) if w else None
    rel = f"{mw / mb:.3f}" if mb and mw is not None else "-"
    sb = f"{fmt(min(b), is_ratio)}-{fmt(max(b), is_ratio)}" if b else "-"
    sw = f"{fmt(min(w), is_ratio)}-{fmt(max(w), is_ratio)}" if w else "-"
    label = n + (" (no unit)" if is_ratio else "")
    print(f"| {label} | {fmt(mb, is_ratio)} | {fmt(mw, is_ratio)} | {rel} | {sb} | {sw} |")
print("\nGoals met per process (the benchmark's own `met?` column):\n")
for side, f in (("base", "base"), ("new", "head")):
    met = []
    for i in range(1, rounds + 1):
        txt = open(os.path.join(work, f"{f}-{i}.md")).read()
        met.append("".join("y" if m == "yes" else "n" for m in re.findall(r"\| (yes|\*\*no\*\*) \|$", txt, re.M)))
    print(f"- {side}: " + " ".join(met) + " (launch, timed sync, alloc+free, sync then launch per process)")

PY
mv "$OUT.tmp" "$OUT"
cat "$OUT"
echo "(written to ${OUT#"$ROOT"/}; $((t_end - t_start)) s in all)" >&2
