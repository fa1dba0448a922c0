// torch_counters.cpp: PyTorch's allocator counters, read inside the process.
//
// The ledger knows the segments the process holds; only torch knows how much of them
// its tensors use. torch.cuda.memory_stats() says that, and the shim calls it without
// importing anything and without touching user code:
//  - Py_AddPendingCall (callable from any thread, without the GIL) asks the interpreter
//    to run one C function on its main thread, between two bytecodes: a point where any
//    Python code may run. That function registers a C callback with atexit.
//  - At exit Python runs its atexit handlers before it tears the interpreter down, and
//    before the C-level exit where the shim writes its report. The callback looks for
//    torch.cuda in sys.modules (never importing it), and when torch initialized CUDA
//    reads torch.cuda.memory_stats(d) of each device, then the ledger of that moment.
//  - After an out-of-memory raised in the main thread, one more pending call reads them
//    again: it runs once torch has flushed its cache, retried and raised (the allocator's
//    lock is no longer held by the thread that runs it).
// Everything is resolved at run time (no libpython link). Every Python error is
// cleared; nothing here can raise into the program. CUDASHIM_TORCH_COUNTERS=0 turns it off.
// Not read: a process ended by os._exit or a signal (Python's atexit does not run), and
// libtorch programs without Python.
#include "shim/torch_counters.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "recorder/ledger.h"
#include "catalog/mem_kinds.h"
#include "recorder/torch_memory.h"
#include "shim/log.h"
#include "shim/real_dl.h"

namespace cudashim::shim {

std::atomic<int> g_torch_arm_state{0};

namespace {

using PyObj = void;
struct PyMethodDefAbi {  // PyMethodDef: stable since Python 2
  const char* name;
  PyObj* (*meth)(PyObj*, PyObj*);
  int flags;
  const char* doc;
};
constexpr int kMethNoArgs = 0x0004;

struct PyApi {
  int (*is_initialized)();
  int (*add_pending)(int (*)(void*), void*);
  PyObj* (*import)(const char*);                     // PyImport_ImportModule: new reference
  PyObj* (*getattr)(PyObj*, const char*);            // new reference
  PyObj* (*cfunction_new)(PyMethodDefAbi*, PyObj*, PyObj*);
  PyObj* (*call_args)(PyObj*, ...);                  // PyObject_CallFunctionObjArgs, NULL-terminated
  PyObj* (*sys_get)(const char*);                    // PySys_GetObject: borrowed
  PyObj* (*dict_get)(PyObj*, const char*);           // PyDict_GetItemString: borrowed
  PyObj* (*long_from)(long);
  long long (*long_as)(PyObj*);
  int (*is_true)(PyObj*);
  PyObj* (*err_occurred)();
  void (*err_clear)();
  void (*decref)(PyObj*);
  PyObj* (*build_value)(const char*, ...);           // Py_BuildValue("") is a new reference to None
  int (*exc_matches)(PyObj*);                        // PyErr_ExceptionMatches
  PyObj** exc_exception;                             // &PyExc_Exception
  const char* (*version)();                          // Py_GetVersion: "3.12.3 (main, ...)"
};
PyApi g_api;
std::atomic<bool> g_enabled{false};  // set by the policy; an inert process stays off
std::atomic<bool> g_oom_pending{false};

bool resolve(PyApi& a) {
  return find_global(a.is_initialized, "Py_IsInitialized") && find_global(a.add_pending, "Py_AddPendingCall") &&
         find_global(a.import, "PyImport_ImportModule") && find_global(a.getattr, "PyObject_GetAttrString") &&
         find_global(a.cfunction_new, "PyCFunction_NewEx") && find_global(a.call_args, "PyObject_CallFunctionObjArgs") &&
         find_global(a.sys_get, "PySys_GetObject") && find_global(a.dict_get, "PyDict_GetItemString") &&
         find_global(a.long_from, "PyLong_FromLong") && find_global(a.long_as, "PyLong_AsLongLong") &&
         find_global(a.is_true, "PyObject_IsTrue") && find_global(a.err_occurred, "PyErr_Occurred") &&
         find_global(a.err_clear, "PyErr_Clear") && find_global(a.decref, "Py_DecRef") && find_global(a.build_value, "Py_BuildValue") &&
         find_global(a.exc_matches, "PyErr_ExceptionMatches") && find_global(a.exc_exception, "PyExc_Exception") &&
         find_global(a.version, "Py_GetVersion");
}

// 3.9 or newer. On 3.8 a pending call requested while the interpreter exits touches the
// thread state of whichever thread holds the GIL, and a pending request slows every other
// Python thread until the main thread runs it (bpo-40010, fixed in 3.9).
bool supported_version(const char* v) {
  if (v == nullptr || v[0] != '3' || v[1] != '.') return false;
  return std::atoi(v + 2) >= 9;
}

// After a failed Python call: true when the exception is not an Exception (KeyboardInterrupt,
// SystemExit raised by a signal handler that ran inside our call). It is left set, for the
// program to see; anything else is cleared.
bool interrupted() {
  if (g_api.err_occurred() == nullptr) return false;
  if (g_api.exc_matches(*g_api.exc_exception) == 0) return true;
  g_api.err_clear();
  return false;
}

void drop(PyObj* o) {
  if (o != nullptr) g_api.decref(o);
}

// Calls `module.name()` (no arguments); a new reference, nullptr on error.
PyObj* call0(PyObj* module, const char* name) {
  PyObj* fn = g_api.getattr(module, name);
  if (fn == nullptr) return nullptr;
  PyObj* r = g_api.call_args(fn, nullptr);
  drop(fn);
  return r;
}

uint64_t stat(PyObj* dict, const char* key) {
  PyObj* v = g_api.dict_get(dict, key);  // borrowed; absent keys are 0 (older torch lacks some)
  if (v == nullptr) return 0;
  const long long n = g_api.long_as(v);
  if (n < 0) {
    g_api.err_clear();
    return 0;
  }
  return static_cast<uint64_t>(n);
}

// Reads every device's counters. Runs on Python's main thread with the GIL held. Returns
// false, with the exception left set, when a KeyboardInterrupt or SystemExit came in.
bool read_counters(recorder::TorchMoment when) {
  PyObj* modules = g_api.sys_get("modules");
  PyObj* tc = modules != nullptr ? g_api.dict_get(modules, "torch.cuda") : nullptr;  // borrowed, never imported
  if (tc == nullptr) {
    if (when == recorder::TorchMoment::exit) recorder::torch_mem_set_state(recorder::TorchMemState::no_torch);
    return true;
  }
  PyObj* init = call0(tc, "is_initialized");
  const bool initialized = init != nullptr && g_api.is_true(init) == 1;
  drop(init);
  if (interrupted()) return false;
  if (!initialized) {
    if (when == recorder::TorchMoment::exit) recorder::torch_mem_set_state(recorder::TorchMemState::not_initialized);
    return true;
  }
  PyObj* count = call0(tc, "device_count");
  long long n = count != nullptr ? g_api.long_as(count) : -1;
  drop(count);
  if (interrupted()) return false;
  if (n > recorder::kTorchMaxDevices) n = recorder::kTorchMaxDevices;
  PyObj* memory_stats = g_api.getattr(tc, "memory_stats");
  recorder::TorchDeviceMemory rows[recorder::kTorchMaxDevices] = {};
  int kept = 0;
  bool failed = memory_stats == nullptr || n < 0;
  for (int d = 0; !failed && d < n; ++d) {
    PyObj* index = g_api.long_from(d);
    PyObj* stats = index != nullptr ? g_api.call_args(memory_stats, index, nullptr) : nullptr;
    drop(index);
    if (stats == nullptr || g_api.dict_get(stats, "num_ooms") == nullptr) {  // a dict with torch's keys
      if (stats == nullptr || g_api.err_occurred() != nullptr) failed = true;
      drop(stats);
      if (interrupted()) {
        drop(memory_stats);
        return false;
      }
      g_api.err_clear();
      continue;
    }
    recorder::TorchDeviceMemory& r = rows[kept];
    r.device = d;
    r.allocated = stat(stats, "allocated_bytes.all.current");
    r.allocated_peak = stat(stats, "allocated_bytes.all.peak");
    r.reserved = stat(stats, "reserved_bytes.all.current");
    r.reserved_peak = stat(stats, "reserved_bytes.all.peak");
    r.active = stat(stats, "active_bytes.all.current");
    r.inactive_split = stat(stats, "inactive_split_bytes.all.current");
    r.inactive_split_peak = stat(stats, "inactive_split_bytes.all.peak");
    r.segments = stat(stats, "segment.all.current");
    r.alloc_retries = stat(stats, "num_alloc_retries");
    r.ooms = stat(stats, "num_ooms");
    drop(stats);
    if (r.reserved_peak == 0 && r.alloc_retries == 0 && r.ooms == 0) continue;  // a device torch never used
    r.process_bytes = recorder::ledger_device_live(d, &r.process_peak_bytes);
    ++kept;
  }
  drop(memory_stats);
  if (interrupted()) return false;
  recorder::torch_mem_store(when, rows, kept);
  if (when == recorder::TorchMoment::exit)
    recorder::torch_mem_set_state(failed && kept == 0 ? recorder::TorchMemState::failed : recorder::TorchMemState::read);
  return true;
}

// The atexit callback (a METH_NOARGS builtin): returns None; raises only an interrupt that
// came in while it read (see interrupted()).
PyObj* at_exit(PyObj*, PyObj*) {
  if (g_enabled.load(std::memory_order_relaxed) && !read_counters(recorder::TorchMoment::exit))
    return nullptr;  // an interrupt came in while we read: Python's atexit reports it as it would its own
  g_api.err_clear();
  return g_api.build_value("");
}
PyMethodDefAbi g_exit_def = {"cudashim_torch_counters", at_exit, kMethNoArgs,
                             "cudashim: reads torch.cuda.memory_stats() at exit for the report"};

// Pending calls: run on the main thread with the GIL held. They return 0 with no exception
// set (the program must not see one out of nowhere), except for an interrupt that arrived
// while they ran: then -1 with it set, and the program gets its KeyboardInterrupt.
int register_at_exit(void*) {
  PyObj* atexit = g_api.import("atexit");
  PyObj* reg = atexit != nullptr ? g_api.getattr(atexit, "register") : nullptr;
  PyObj* fn = reg != nullptr ? g_api.cfunction_new(&g_exit_def, nullptr, nullptr) : nullptr;
  PyObj* r = fn != nullptr ? g_api.call_args(reg, fn, nullptr) : nullptr;
  if (r != nullptr) recorder::torch_mem_set_state(recorder::TorchMemState::armed);
  drop(r);
  drop(fn);
  drop(reg);
  drop(atexit);
  return interrupted() ? -1 : 0;
}

int read_after_oom(void*) {
  const bool ok = read_counters(recorder::TorchMoment::oom);
  g_oom_pending.store(false, std::memory_order_release);
  if (!ok) return -1;
  g_api.err_clear();
  return 0;
}

}  // namespace

void torch_counters_configure(bool on) {
  g_enabled.store(on, std::memory_order_relaxed);
  if (!on) recorder::torch_mem_set_state(recorder::TorchMemState::off);
}

void torch_counters_arm_slow() {
  int expected = 0;
  if (!g_torch_arm_state.compare_exchange_strong(expected, 1)) return;
  int result = 3;
  if (g_enabled.load(std::memory_order_relaxed) && resolve(g_api) && supported_version(g_api.version()) &&
      g_api.is_initialized() != 0) {
    // -1: the interpreter's queue is full (a burst of signals); the next allocation retries.
    result = g_api.add_pending(register_at_exit, nullptr) == 0 ? 2 : 0;
    // Before the request runs (register_at_exit sets armed; the main thread may also never
    // come back to the interpreter, as in a C++ program embedding Python).
    if (result == 2)
      recorder::torch_mem_advance_state(recorder::TorchMemState::not_armed, recorder::TorchMemState::asked);
  }
  g_torch_arm_state.store(result, std::memory_order_release);
}

void torch_counters_after_oom() {
  if (g_torch_arm_state.load(std::memory_order_acquire) != 2 || !g_enabled.load(std::memory_order_relaxed)) return;
  // Only the main thread: there torch's allocator lock is released before the next
  // bytecode. Another thread's OOM could leave that lock held while the main thread
  // runs the read (and waits for it).
  if (syscall(SYS_gettid) != getpid()) return;
  // A program that embeds Python may have finalized it and go on with CUDA: a pending call
  // then has no interpreter (race-free here: finalization runs on this same thread).
  if (g_api.is_initialized() == 0) return;
  bool expected = false;
  if (!g_oom_pending.compare_exchange_strong(expected, true)) return;
  if (g_api.add_pending(read_after_oom, nullptr) != 0) g_oom_pending.store(false);
}

}  // namespace cudashim::shim
