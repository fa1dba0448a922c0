#!/usr/bin/env bash
# test.sh: the whole test suite, as CI runs it. Installs what is missing (setup.sh
# --tests), builds against both CUDA header sets (13.0 from /usr/local/cuda or the wheel
# in .deps/cu130, 12.9 from the wheel in .deps/cu129), runs CTest on each (the 13.0 tree
# also runs the libFuzzer targets, label fuzz; both pack and check the wheel, label wheel,
# and run it on Debian 11's glibc, label oldglibc),
# then a test-only tree under ASan+UBSan, the load test under ThreadSanitizer, and the
# AArch64 subset under qemu-user (build-aarch64, label aarch64). Ends with the last CTest
# summary; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh --tests
CU13=$(./scripts/cuda_include.sh)
./scripts/build.sh build-cu129 "$PWD/.deps/cu129/nvidia/cuda_runtime/include"
./scripts/build.sh build "$CU13"
status=0
echo "== CTest, CUDA 12.9 headers (build-cu129) =="
(cd build-cu129 && ctest --output-on-failure -j"$(nproc)") || status=1
echo "== CTest, CUDA 13.0 headers (build) =="
(cd build && ctest --output-on-failure -j"$(nproc)") || status=1

# The sanitizer tree (test-only; nothing in it ships): the CLI and the test programs under
# ASan+UBSan (the preload library stays plain: it goes into processes that are not
# instrumented), running the unit, CLI and preload tests but the long load ones. ASan
# leaves the fatal signals to the flight recorder (the crash tests compare each end with
# the program's own); LeakSanitizer is off: its tracer crashes in a process that calls
# exit() while threads are inside the shim (docs/reliability.md). The fork tests are left
# out: GCC 12's ASan allocator is not fork-safe (a child forked while another thread holds
# the allocator's lock hangs in malloc; seen in preload.fork.threads), and the plain trees
# run them.
echo "== ASan+UBSan: the CLI and the test programs (build-asan) =="
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
[ -f build-asan/CMakeCache.txt ] || cmake -S . -B build-asan "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCUDASHIM_CUDA_INCLUDE="$CU13" -DCUDASHIM_SANITIZE=ON >/dev/null
if cmake --build build-asan -j"$(nproc)"; then
  (cd build-asan && ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0 \
    ctest --output-on-failure -j"$(nproc)" -L 'unit|preload' -LE '^(load|realbin|gpu)$' -E '^preload\.(fork\.|job_limits\.fork_exit$)') || status=1
else
  status=1
fi

# The load test under ThreadSanitizer (test-only tree: everything instrumented, the preload
# library included, since the races that matter are in its recorder). Only what tsan.stress
# needs is built: the shim, the driver double and the program; the hook names come from
# build/'s CLI. 64 threads x 10^5 calls: the stage takes under 2 minutes from an empty tree
# on the 2-core VM; 10^6 calls would add about 2 minutes (docs/reliability.md). Configured
# each time, so that the call count holds in an existing tree.
echo "== ThreadSanitizer: the load test (build-tsan) =="
if cmake -S . -B build-tsan "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDASHIM_CUDA_INCLUDE="$CU13" \
    -DCUDASHIM_TSAN=ON -DCUDASHIM_TSAN_CALLS=100000 -DCUDASHIM_TSAN_HOOK_CLI="$PWD/build/bin/cudashim" >/dev/null &&
  cmake --build build-tsan -j"$(nproc)" --target cudashim_preload stress_threads; then
  (cd build-tsan && ctest --output-on-failure -L tsan) || status=1
else
  status=1
fi

# The AArch64 port (Grace: GH200, GB200, GB300), on this x86-64 machine: the tree of the
# aarch64 wheel, cross-built with Debian's cross toolchain (cmake/aarch64-linux-gnu.cmake),
# and the subset of tests that proves the port run under qemu-user (tests/aarch64: hygiene
# of the shipped binaries, every resolution path, the dl* trampolines, the clock, a Python
# line, the CLI goldens, the wheel). Not the whole suite a second time: only what the
# subset needs is built (target aarch64_tests). From an empty tree: 476 s of CPU (user+sys),
# nearly all of it compiling the shim and the CLI, so about 4 to 5 minutes on the idle
# 2-core VM; 617 s of wall when measured beside other builds (load 6 to 9); the 16 tests
# take 5 s (docs/aarch64.md).
echo "== AArch64 under qemu-user: the port's subset (build-aarch64) =="
if cmake -S . -B build-aarch64 "${gen[@]}" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/aarch64-linux-gnu.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDASHIM_CUDA_INCLUDE="$CU13" -DCUDASHIM_BUILD_EXAMPLES=OFF \
    -DCUDASHIM_FUZZ=OFF -DCUDASHIM_ARM64_ROOT="$(./scripts/arm64_userland.sh)" >/dev/null &&
  cmake --build build-aarch64 -j"$(nproc)" --target aarch64_tests; then
  (cd build-aarch64 && ctest --output-on-failure -j"$(nproc)" -L aarch64) || status=1
else
  status=1
fi
exit $status
