#!/usr/bin/env bash
# make_seeds.sh: regenerates the binary seeds of tests/fuzz/corpus (committed; run
# this only to refresh them). Needs nvcc (/usr/local/cuda/bin) and gcc.
#   corpus/elf/scale_sm90.o       nvcc 13 object: a .nv_fatbin with an sm_90 cubin and compute_80 PTX
#   corpus/elf/libseed.so.1       gcc shared library: SONAME, RUNPATH, NEEDED, a version
#                                 definition, versioned imports (dlsym@GLIBC_2.34), stripped
#   corpus/fatbin/scale_sm90.nv_fatbin  the .nv_fatbin section of scale_sm90.o, byte for byte
# The text seeds (corpus/policy/*.toml) are written by hand. corpus/report and corpus/stream
# (fuzz_report, fuzz_stream) are outputs of the test programs under the shim, through the
# test double (build/bin/sync_rules readback: a report with native call sites and its
# stream; build/bin/crash segv: a flight record), and two written by hand with the
# sections those lack (torch_memory, a rank; a signal and an exit line).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}

cat >"$tmp/scale.cu" <<'CU'
__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }
CU
"$NVCC" -c -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80 \
  "$tmp/scale.cu" -o "$here/corpus/elf/scale_sm90.o"
objcopy -O binary --only-section=.nv_fatbin "$here/corpus/elf/scale_sm90.o" "$here/corpus/fatbin/scale_sm90.nv_fatbin"

cat >"$tmp/seed.c" <<'C'
#include <dlfcn.h>
void* seed_lookup(const char* name) { return dlsym(RTLD_DEFAULT, name); }
int seed_version(void) { return 1; }
C
printf 'SEED_1.0 { global: seed_lookup; seed_version; local: *; };\n' >"$tmp/seed.map"
gcc -shared -fPIC -O2 -o "$here/corpus/elf/libseed.so.1" "$tmp/seed.c" -ldl \
  -Wl,-soname,libseed.so.1 -Wl,--version-script="$tmp/seed.map" -Wl,-rpath,'$ORIGIN/../lib' \
  -Wl,--enable-new-dtags -Wl,-z,noseparate-code -Wl,--build-id=none
strip --strip-unneeded "$here/corpus/elf/libseed.so.1"
ls -l "$here"/corpus/elf "$here"/corpus/fatbin
