#!/usr/bin/env python3
"""frameless_wait.py: a read-back made for the main thread by a thread with no Python frame is
found at the main thread's line (shim/wait_sampler.h), on CPython X.Y (issue 19).

jax.device_get(loss) in a loop: the main thread sleeps while one of XLA's threads, which never
ran Python, copies 4 bytes to the host. A small library built here with cc plays XLA: a worker
thread of its own that, per request, copies 4 bytes device-to-host through the runtime double
and then waits 3 ms (the GPU finishing the step) before it wakes the caller. It lives in a
site-packages folder, as XLA's plugin does, so that its own native site is the framework's.
The child, on the main thread, with the GIL released in the library's calls (ctypes.CDLL):
  LINE-BURST  one call during which the worker reads back 600 times (XLA autotuning while the
              main thread waits in a compile): one visit, no finding;
  LINE-BUSY   a Python loop that computes while the worker reads back in the background: the
              main thread is running, not waiting: no finding;
  LINE-WAIT   a loop of 400 steps, each a memset of the main thread's own and one read-back it
              sleeps until: sync.scalar-readback at this line, a warning, its site sampled, its
              Python stack starting at this line.
Then the worker's copies take 2 ms inside the call, as copies from and to pageable memory do
(XLA's on the H200), and a loop of 300 steps models jax_mlp.py's:
  LINE-DISPATCH  the step's dispatch: the worker takes the batch after a hand-off of 0.3 ms and
                 copies it to the device while the main thread waits: the wait is for that copy,
                 not for the read-back: no finding (marks taken at a copy's return named this line);
  LINE-FETCH     jax.device_get: the worker's read-back, with the main thread asleep inside it:
                 sync.scalar-readback at this line, sampled.
And 300 more steps as XLA reads back on the H200: the worker waits until the step is done and
only then starts the 4-byte copy, so most of the main thread's wait comes before the copy:
  LINE-DISPATCH-2  as LINE-DISPATCH: no finding;
  LINE-LATE        sync.scalar-readback at this line, sampled.
usage: frameless_wait.py SHIM FAKECUDA_DIR CUDART_PATH X.Y PYTHONS_SH
"""
import ctypes
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile

from preload_support import line_of, interpreter

LIB_C = r"""
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>
typedef int (*malloc_t)(void**, size_t);
typedef int (*copy_t)(void*, const void*, size_t, int, void*);
typedef int (*copy_sync_t)(void*, const void*, size_t, int);
static copy_t g_copy;
static void *g_dev, *g_host;
static unsigned g_gpu_us;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static copy_sync_t g_copy_sync;
static int g_asked, g_done, g_background;  /* read-backs asked for, done; asked with no waiter */
static int g_batches_asked, g_batches_done;  /* batches to copy to the device (blocking copies) */
static int g_fetches_asked, g_fetches_done;  /* blocking read-backs */
static int g_lates_asked, g_lates_done;      /* read-backs issued once the step is done (XLA's) */

static void* worker(void* arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&g_mu);
    while (g_done == g_asked && g_batches_done == g_batches_asked && g_fetches_done == g_fetches_asked &&
           g_lates_done == g_lates_asked)
      pthread_cond_wait(&g_cv, &g_mu);
    const int batch = g_batches_done < g_batches_asked, fetch = !batch && g_fetches_done < g_fetches_asked;
    const int late = !batch && !fetch && g_lates_done < g_lates_asked;
    pthread_mutex_unlock(&g_mu);
    if (batch) {
      usleep(300);                           /* the hand-off: the main thread already asleep */
      g_copy_sync(g_dev, g_host, 64, 1);     /* cudaMemcpy, host to device: the batch */
    } else if (fetch) {
      g_copy_sync(g_host, g_dev, 4, 2);      /* cudaMemcpy, device to host, 4 bytes: the wait is inside */
    } else if (late) {
      usleep(2000);                          /* until the step's kernels are done, then */
      g_copy(g_host, g_dev, 4, 2, 0);        /* cudaMemcpyAsync, device to host, 4 bytes */
    } else {
      g_copy(g_host, g_dev, 4, 2, 0);  /* cudaMemcpyAsync, device to host, 4 bytes */
      usleep(g_gpu_us);                /* until the GPU has finished the step */
    }
    pthread_mutex_lock(&g_mu);
    if (batch) ++g_batches_done;
    else if (fetch) ++g_fetches_done;
    else if (late) ++g_lates_done;
    else {
      ++g_done;
      if (g_background > 0) --g_background;
    }
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
  }
  return 0;
}
int xla_start(const char* cudart, unsigned gpu_us) {
  void* rt = dlopen(cudart, RTLD_NOW);
  if (!rt) return 1;
  malloc_t dev = (malloc_t)dlsym(rt, "cudaMalloc"), host = (malloc_t)dlsym(rt, "cudaMallocHost");
  g_copy = (copy_t)dlsym(rt, "cudaMemcpyAsync");
  g_copy_sync = (copy_sync_t)dlsym(rt, "cudaMemcpy");
  if (!dev || !host || !g_copy || !g_copy_sync || dev(&g_dev, 64) != 0 || host(&g_host, 64) != 0) return 2;
  g_gpu_us = gpu_us;
  pthread_t t;
  return pthread_create(&t, 0, worker, 0) == 0 ? 0 : 3;
}
/* n read-backs, the caller asleep until the last one is done */
void xla_wait(int n) {
  pthread_mutex_lock(&g_mu);
  int until = g_asked + n;
  g_asked = until;
  pthread_cond_broadcast(&g_cv);
  while (g_done < until) pthread_cond_wait(&g_cv, &g_mu);
  pthread_mutex_unlock(&g_mu);
}
/* n read-backs nobody waits for; xla_left() counts those not done */
void xla_background(int n) {
  pthread_mutex_lock(&g_mu);
  g_asked += n;
  g_background += n;
  pthread_cond_broadcast(&g_cv);
  pthread_mutex_unlock(&g_mu);
}
/* one request of a kind, the caller asleep until it is done */
static void ask_and_wait(int* asked, int* done) {
  pthread_mutex_lock(&g_mu);
  int until = ++*asked;
  pthread_cond_broadcast(&g_cv);
  while (*done < until) pthread_cond_wait(&g_cv, &g_mu);
  pthread_mutex_unlock(&g_mu);
}
void xla_dispatch(void) { ask_and_wait(&g_batches_asked, &g_batches_done); }
void xla_fetch(void) { ask_and_wait(&g_fetches_asked, &g_fetches_done); }
void xla_fetch_late(void) { ask_and_wait(&g_lates_asked, &g_lates_done); }
/* the driver double's blocking calls take this long from now on (pageable copies) */
int xla_copies_take(unsigned long long ns) {
  void* drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  void (*set)(unsigned long long) = drv ? (void (*)(unsigned long long))dlsym(drv, "fakecuda_set_sync_delay_ns") : 0;
  if (!set) return 1;
  set(ns);
  return 0;
}
int xla_left(void) {
  pthread_mutex_lock(&g_mu);
  int n = g_background;
  pthread_mutex_unlock(&g_mu);
  return n;
}
"""


def child(lib_path, cudart):
    xla = ctypes.CDLL(lib_path)    # the GIL is released in its calls, as jaxlib releases it
    held = ctypes.PyDLL(cudart)    # the main thread's own CUDA work, with the GIL held
    assert xla.xla_start(cudart.encode(), 3000) == 0
    buf = ctypes.c_void_p()
    assert held.cudaMalloc(ctypes.byref(buf), ctypes.c_size_t(64)) == 0
    xla.xla_wait(600)  # LINE-BURST
    xla.xla_background(300)
    spins = 0
    while xla.xla_left() > 0:
        spins += sum(range(200))  # LINE-BUSY
    for _ in range(400):
        held.cudaMemset(buf, 0, ctypes.c_size_t(4))  # the step's own work on the device
        xla.xla_wait(1)  # LINE-WAIT
    assert xla.xla_copies_take(ctypes.c_ulonglong(2000000)) == 0
    for _ in range(300):
        held.cudaMemsetAsync(buf, 0, ctypes.c_size_t(4), None)
        xla.xla_dispatch()  # LINE-DISPATCH
        xla.xla_fetch()  # LINE-FETCH
    for _ in range(300):
        held.cudaMemsetAsync(buf, 0, ctypes.c_size_t(4), None)
        xla.xla_dispatch()  # LINE-DISPATCH-2
        xla.xla_fetch_late()  # LINE-LATE


def main():
    shim, fake, cudart, version, pythons_sh = sys.argv[1:6]
    py = interpreter(version, pythons_sh)
    if py is None:
        print(f"FAIL: no CPython {version} to run the test on (scripts/pythons.sh install fetches or finds one)")
        return 1
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("FAIL: no C compiler (cc) to build the stand-in XLA library")
        return 1
    errors = []
    base = os.path.basename(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "fakexla.c")
        with open(src, "w") as f:
            f.write(LIB_C)
        lib = os.path.join(tmp, "lib", "python3.99", "site-packages", "fakexla", "libfakexla.so")
        os.makedirs(os.path.dirname(lib))
        p = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", lib, src, "-ldl", "-lpthread"], capture_output=True,
                           text=True)
        if p.returncode != 0:
            print(f"FAIL: cc: {p.stderr}")
            return 1
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=fake, CUDASHIM_OUT=out)
        p = subprocess.run([py, __file__, "--child", lib, cudart], env=env, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            print(f"FAIL: python {version} ({py}): the child exited {p.returncode}: {p.stderr[-800:]}")
            return 1
        reps = [json.load(open(f)) for f in glob.glob(os.path.join(out, "cudashim-*.json"))]
        findings = [f for r in reps for f in r.get("findings", [])]
        for f in findings:
            print(f"  {f['id']} {f['severity']} [{f.get('framework')}] x{f['count']}: "
                  f"{[(s['where'], s.get('sampled'), s['count'], s['steps']) for s in f['sites']]}")
        for tag in ("LINE-WAIT", "LINE-FETCH", "LINE-LATE"):
            wait = f"{base}:{line_of(__file__, tag)} (child)"
            hit = [(f, s) for f in findings for s in f["sites"] if wait in s["where"]]
            if not hit:
                errors.append(f"no finding names {wait} ({tag})")
                continue
            f, s = hit[0]
            if f["id"] != "sync.scalar-readback" or f["severity"] != "warning":
                errors.append(f"{wait}: {f['id']} {f['severity']}, not a sync.scalar-readback warning")
            if s.get("sampled") is not True:
                errors.append(f"{wait}: its site is not marked sampled: {s.get('sampled')}")
            if not s["python"] or not s["python"][0].endswith(wait):
                errors.append(f"{wait}: the site's Python stack does not start there: {s['python']}")
            if s["steps"] <= 10:
                errors.append(f"{wait}: {s['steps']} steps, not a loop's (more than the warm-up of 10)")
        for tag in ("LINE-BURST", "LINE-BUSY", "LINE-DISPATCH", "LINE-DISPATCH-2"):
            where = f"{base}:{line_of(__file__, tag)} "
            bad = [f["id"] for f in findings for s in f["sites"] if where in s["where"]]
            if bad:
                errors.append(f"{tag}: a finding names {where.strip()}: {bad}")
        for tag in ("LINE-WAIT", "LINE-FETCH"):
            wait = f"{base}:{line_of(__file__, tag)} (child)"
            if f"[sync.scalar-readback]" not in p.stderr or wait not in p.stderr:
                errors.append(f"no live warning line names {wait}: {p.stderr[-600:]}")
    for e in errors:
        print(f"FAIL: python {version}, {e}")
    if not errors:
        print(f"ok: python {version}: the read-back of a thread with no Python frame is found at the line waiting for it")
    return 1 if errors else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
