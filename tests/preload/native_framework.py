#!/usr/bin/env python3
"""native_framework.py: a native site inside a framework's package is the framework's (issue 19).

JAX's runtime (site-packages/jax_plugins/.../xla_cuda_plugin.so) makes its copies and syncs on
its own threads: no Python frame, nothing the user's code can change. On the H200 those were
four warnings at `xla_cuda_plugin.so+0x...` because a native site was judged by the module's
basename, which names no package. The same small library (built here with cc) does 30
read-backs (a 4-byte device-to-host copy, then a stream sync) on a thread of its own, once
from a site-packages folder and once from a plain folder:
  site-packages/fakexla/libfakexla.so   sync.scalar-readback is info, framework "fakexla", no warning line
  plain/libfakexla.so                   sync.scalar-readback is a warning (no package owns it)

usage: native_framework.py SHIM FAKECUDA_DIR CUDART_PATH
"""
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

LIB_C = r"""
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
typedef int (*malloc_t)(void**, size_t);
typedef int (*memcpy_t)(void*, const void*, size_t, int);
typedef int (*sync_t)(void*);
static const char* g_cudart;
static void* loop(void* arg) {
  (void)arg;
  void* rt = dlopen(g_cudart, RTLD_NOW);
  if (!rt) return (void*)1;
  malloc_t m = (malloc_t)dlsym(rt, "cudaMalloc");
  memcpy_t cp = (memcpy_t)dlsym(rt, "cudaMemcpy");
  sync_t sy = (sync_t)dlsym(rt, "cudaStreamSynchronize");
  void* buf = 0;
  char out[4];
  if (!m || !cp || !sy || m(&buf, 64) != 0) return (void*)2;
  for (int i = 0; i < 30; ++i) {
    cp(out, buf, 4, 2);
    sy(0);
  }
  return 0;
}
int run(const char* cudart) {
  g_cudart = cudart;
  pthread_t t;
  void* rc = 0;
  if (pthread_create(&t, 0, loop, 0) != 0) return 3;
  pthread_join(t, &rc);
  return (int)(size_t)rc;
}
"""


def child(lib, cudart):
    rc = ctypes.CDLL(lib).run(cudart.encode())
    sys.exit(rc)


def main():
    shim, fake, cudart = sys.argv[1:4]
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("FAIL: no C compiler (cc) to build the stand-in framework library")
        return 1
    errors = []
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "fakexla.c")
        with open(src, "w") as f:
            f.write(LIB_C)
        cases = {"framework": os.path.join(tmp, "lib", "python3.99", "site-packages", "fakexla", "libfakexla.so"),
                 "plain": os.path.join(tmp, "plain", "libfakexla.so")}
        for case, lib in cases.items():
            os.makedirs(os.path.dirname(lib))
            p = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, src, "-ldl", "-lpthread"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL: cc: {p.stderr}")
                return 1
            out = os.path.join(tmp, "out-" + case)
            os.makedirs(out)
            env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
            p = subprocess.run([sys.executable, __file__, "--child", lib, cudart], env=env, capture_output=True,
                               text=True, timeout=120)
            if p.returncode != 0:
                errors.append(f"{case}: the child exited {p.returncode}: {p.stderr[-600:]}")
                continue
            reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
            rb = [f for r in reps for f in r.get("findings", []) if f["id"] == "sync.scalar-readback"]
            warned = "warning: [sync.scalar-readback]" in p.stderr
            print(f"{case}: {[(f['severity'], f.get('framework'), [s['where'] for s in f['sites']]) for f in rb]}; "
                  f"warning line: {warned}")
            if not rb:
                errors.append(f"{case}: no sync.scalar-readback finding at all")
            elif case == "framework":
                if any(f["severity"] != "info" or f.get("framework") != "fakexla" for f in rb):
                    errors.append(f"framework: the library's own read-backs are not info of framework 'fakexla': "
                                  f"{[(f['severity'], f.get('framework')) for f in rb]}")
                if warned:
                    errors.append("framework: a warning line was printed for the framework's own site")
            else:
                if not any(f["severity"] == "warning" and f.get("framework") is None for f in rb):
                    errors.append(f"plain: the read-backs of a library no package owns are not a warning: "
                                  f"{[(f['severity'], f.get('framework')) for f in rb]}")
    for e in errors:
        print(f"FAIL: {e}")
    if not errors:
        print("ok: a native site in site-packages is its framework's (info), the same library elsewhere warns")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
