// python_stack.cpp: the calling thread's Python location, read safely.
//
// Only the public C API, resolved at run time (no libpython link, any CPython
// >= 3.9, nothing at all when the process has no Python), and only while the
// calling thread holds the GIL (PyGILState_Check): a thread that released the GIL
// (torch.cuda.synchronize() does) gets its native call site only.
#include <dlfcn.h>

#include <cstring>

#include "recorder/callsites.h"
#include "shim/real_dl.h"
#include "shim/sync_observer.h"

namespace cudashim::shim {
namespace {

using PyObj = void;
struct PyApi {
  int (*is_initialized)();
  int (*gil_check)();
  PyObj* (*get_frame)();               // borrowed
  int (*line_number)(PyObj*);
  PyObj* (*frame_code)(PyObj*);        // new reference
  PyObj* (*frame_back)(PyObj*);        // new reference
  void (*decref)(PyObj*);
  PyObj* (*getattr)(PyObj*, const char*);  // new reference
  const char* (*utf8)(PyObj*);
  void (*err_clear)();
};
PyApi g_py;
std::atomic<int> g_state{0};  // 0 not looked, 1 ready, 2 absent

bool can_read() { return g_py.is_initialized() != 0 && g_py.gil_check() == 1; }

void locate(recorder::PyLocation& out) {
  if (!can_read()) return;
  PyObj* frame = g_py.get_frame();
  if (frame == nullptr) return;
  PyObj* code = g_py.frame_code(frame);
  out.code = code;  // identity only; the frame keeps the code alive while we run
  out.line = g_py.line_number(frame);
  g_py.decref(code);
}

void copy_text(char* dst, size_t n, PyObj* obj) {
  const char* s = obj ? g_py.utf8(obj) : nullptr;
  if (s == nullptr) {
    g_py.err_clear();
    std::strncpy(dst, "?", n);
  } else {
    // Keep the tail of long paths: the file name matters more than the prefix.
    const size_t len = std::strlen(s);
    std::strncpy(dst, len >= n ? s + (len - n + 1) : s, n - 1);
  }
  dst[n - 1] = '\0';
}

int capture(recorder::PyFrameText* frames, int max) {
  if (!can_read()) return 0;
  PyObj* frame = g_py.get_frame();
  PyObj* owned = nullptr;  // frames from frame_back are new references
  int n = 0;
  while (frame != nullptr && n < max) {
    PyObj* code = g_py.frame_code(frame);
    PyObj* file = g_py.getattr(code, "co_filename");
    PyObj* name = g_py.getattr(code, "co_name");
    copy_text(frames[n].file, sizeof frames[n].file, file);
    copy_text(frames[n].function, sizeof frames[n].function, name);
    frames[n].line = g_py.line_number(frame);
    if (file) g_py.decref(file);
    if (name) g_py.decref(name);
    g_py.decref(code);
    ++n;
    PyObj* back = g_py.frame_back(frame);
    if (owned) g_py.decref(owned);
    owned = back;
    frame = back;
  }
  if (owned) g_py.decref(owned);
  return n;
}

template <typename T>
bool find(T& fn, const char* name) {
  fn = reinterpret_cast<T>(real_dl().dlsym(RTLD_DEFAULT, name));
  return fn != nullptr;
}

}  // namespace

void install_python_readers() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 3)) return;  // 3: installing
  PyApi a{};
  const bool ok = find(a.is_initialized, "Py_IsInitialized") && find(a.gil_check, "PyGILState_Check") &&
                  find(a.get_frame, "PyEval_GetFrame") && find(a.line_number, "PyFrame_GetLineNumber") &&
                  find(a.frame_code, "PyFrame_GetCode") && find(a.frame_back, "PyFrame_GetBack") &&
                  find(a.decref, "Py_DecRef") && find(a.getattr, "PyObject_GetAttrString") &&
                  find(a.utf8, "PyUnicode_AsUTF8") && find(a.err_clear, "PyErr_Clear");
  if (ok) {
    g_py = a;
    recorder::g_py_capture.store(capture, std::memory_order_release);
    recorder::g_py_locate.store(locate, std::memory_order_release);
  }
  g_state.store(ok ? 1 : 2, std::memory_order_release);
}

}  // namespace cudashim::shim
