// python_stack.cpp: the calling thread's Python location.
//
// Two readers, both through symbols resolved at run time (no libpython link; a
// process without Python gets none):
//  - With the GIL held (PyGILState_Check): the public C API (PyEval_GetFrame, ...).
//  - Without it, on CPython 3.12 and 3.13 only: PyTorch releases the GIL inside
//    nearly every op (.item(), nonzero, synchronize), so the thread that called the
//    hooked function is blocked in C code, and its own Python frames cannot change
//    under us. We read them without allocating and without touching reference
//    counts, the way sampling profilers do: tstate -> current interpreter frame ->
//    code object, line from PyUnstable_InterpreterFrame_GetLine. The layout is
//    discovered once by probing with process_vm_readv (a bad guess is an EFAULT,
//    never a crash) and checked against PyCode_Type / PyUnicode_Type on every read.
//    On 3.12 and 3.13 this reader is also used while the GIL is held: PyEval_GetFrame
//    would materialize a frame object (which the interpreter must then copy the frame
//    into when the function returns) and PyFrame_GetLineNumber decodes the line table
//    on every call. A hit is keyed by (code object, instruction pointer); the line is
//    read once, when the site's stacks are captured at its first hit.
//    Entry frames that delimit C and Python stacks (owner FRAME_OWNED_BY_CSTACK, the
//    "<shim>" code of the interpreter trampoline) are skipped.
//    CUDASHIM_PYTHON_STACKS=0 turns both readers off.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "policy/user_frame.h"
#include "recorder/callsites.h"
#include "shim/real_dl.h"
#include "shim/sync_observer.h"

namespace cudashim::shim {
namespace {

using PyObj = void;
struct PyApi {
  int (*is_initialized)();
  int (*gil_check)();
  PyObj* (*get_frame)();                   // borrowed
  int (*line_number)(PyObj*);
  PyObj* (*frame_code)(PyObj*);            // new reference
  PyObj* (*frame_back)(PyObj*);            // new reference
  void (*decref)(PyObj*);
  PyObj* (*getattr)(PyObj*, const char*);  // new reference
  const char* (*utf8)(PyObj*);
  void (*err_clear)();
  // GIL-free reader (3.12+)
  void* (*this_tstate)();                  // PyGILState_GetThisThreadState
  int (*iframe_line)(void*);               // PyUnstable_InterpreterFrame_GetLine
  const void* code_type;                   // &PyCode_Type
  const void* str_type;                    // &PyUnicode_Type
  const void* bytes_type;                  // &PyBytes_Type
  const void* tuple_type;                  // &PyTuple_Type
  unsigned long version;                   // Py_Version
};
PyApi g_py;

// Discovered layout of the GIL-free reader. -1: unknown yet; -2: given up.
struct Layout {
  int tstate_off = -1;     // offset in PyThreadState of the frame (3.13) or the cframe (3.12) pointer
  bool via_cframe = false; // 3.12: tstate->cframe->current_frame
  int filename_off = -1;   // offset in PyCodeObject of co_filename (co_name follows)
};
Layout g_layout;
std::atomic<int> g_probes{0};
std::atomic<bool> g_gil_free_ok{false};

constexpr int kPrevOff = 8;           // _PyInterpreterFrame.previous (3.12, 3.13)
constexpr int kInstrOff = 56;         // .prev_instr (3.12) / .instr_ptr (3.13)
constexpr int kOwnerOff = 70;         // .owner (char), after int stacktop and uint16 return_offset
constexpr char kOwnedByCStack = 3;    // FRAME_OWNED_BY_CSTACK: an entry frame, not Python code
constexpr int kAsciiDataOff = 40;     // sizeof(PyASCIIObject) (3.12, 3.13: no wstr)
constexpr int kStrStateOff = 32;      // PyASCIIObject.state
constexpr unsigned kCompactAscii = (1u << 5) | (1u << 6);

// Reads a word at `addr` without faulting. Only used while probing.
bool safe_read(const void* addr, uintptr_t& out) {
  if (addr == nullptr) return false;
  iovec local{&out, sizeof out}, remote{const_cast<void*>(addr), sizeof out};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(sizeof out);
}

uintptr_t word(const void* base, int off) { return *reinterpret_cast<const uintptr_t*>(static_cast<const char*>(base) + off); }
const void* type_of(const void* obj) { return reinterpret_cast<const void*>(word(obj, 8)); }
bool probe_type(uintptr_t obj, const void* type) {
  uintptr_t t = 0;
  return obj != 0 && safe_read(reinterpret_cast<const void*>(obj + 8), t) && reinterpret_cast<const void*>(t) == type;
}

// Finds where the current interpreter frame hangs off the thread state.
bool probe_tstate(const void* tstate) {
  for (int off = 16; off < 512; off += 8) {
    uintptr_t p = 0, frame = 0, code = 0;
    if (!safe_read(static_cast<const char*>(tstate) + off, p) || p == 0) continue;
    const bool v312 = (g_py.version >> 16) == 0x030C;
    if (v312) {
      if (!safe_read(reinterpret_cast<const void*>(p), frame)) continue;  // cframe->current_frame
    } else {
      frame = p;
    }
    if (frame == 0 || !safe_read(reinterpret_cast<const void*>(frame), code)) continue;
    if (!probe_type(code, g_py.code_type)) continue;
    g_layout.tstate_off = off;
    g_layout.via_cframe = v312;
    // co_filename: a str, str, str run (filename, name, qualname) right after a
    // tuple and a bytes (co_localsplusnames, co_localspluskinds).
    for (int k = 40; k < 320; k += 8) {
      uintptr_t a = 0, b = 0, c = 0, t = 0, by = 0;
      if (!safe_read(reinterpret_cast<const void*>(code + k), a) || !safe_read(reinterpret_cast<const void*>(code + k + 8), b) ||
          !safe_read(reinterpret_cast<const void*>(code + k + 16), c) ||
          !safe_read(reinterpret_cast<const void*>(code + k - 16), t) ||
          !safe_read(reinterpret_cast<const void*>(code + k - 8), by))
        continue;
      if (probe_type(a, g_py.str_type) && probe_type(b, g_py.str_type) && probe_type(c, g_py.str_type) &&
          probe_type(t, g_py.tuple_type) && probe_type(by, g_py.bytes_type)) {
        g_layout.filename_off = k;
        break;
      }
    }
    return true;
  }
  return false;
}

// A frame of Python code: its code is a code object and it is not an entry frame.
bool is_python_frame(const void* f) {
  const void* code = reinterpret_cast<const void*>(word(f, 0));
  return code != nullptr && type_of(code) == g_py.code_type &&
         *(static_cast<const char*>(f) + kOwnerOff) < kOwnedByCStack;
}

// The innermost Python frame of this thread whose code is a code object, or nullptr.
const void* current_iframe() {
  if (!g_gil_free_ok.load(std::memory_order_acquire)) {
    if (g_layout.tstate_off == -2 || g_probes.fetch_add(1, std::memory_order_relaxed) > 16) return nullptr;
    const void* ts = g_py.this_tstate();
    if (ts == nullptr) return nullptr;
    if (!probe_tstate(ts)) return nullptr;
    g_gil_free_ok.store(true, std::memory_order_release);
  }
  const void* ts = g_py.this_tstate();
  if (ts == nullptr) return nullptr;
  const void* p = reinterpret_cast<const void*>(word(ts, g_layout.tstate_off));
  if (p != nullptr && g_layout.via_cframe) p = reinterpret_cast<const void*>(word(p, 0));
  for (int guard = 0; p != nullptr && guard < 64; ++guard) {
    if (is_python_frame(p)) return p;
    p = reinterpret_cast<const void*>(word(p, kPrevOff));  // a C-stack entry frame: look further out
  }
  return nullptr;
}

// Copies a compact ASCII str's text (no allocation, no refcount); "?" otherwise.
void copy_ascii(char* dst, size_t n, const void* str) {
  if (str != nullptr && type_of(str) == g_py.str_type &&
      (*reinterpret_cast<const unsigned*>(static_cast<const char*>(str) + kStrStateOff) & kCompactAscii) == kCompactAscii) {
    const size_t len = static_cast<size_t>(word(str, 16));
    const char* s = static_cast<const char*>(str) + kAsciiDataOff;
    const size_t from = len >= n ? len - (n - 1) : 0;  // keep the tail of long paths
    const size_t m = len - from;
    std::memcpy(dst, s + from, m);
    dst[m] = '\0';
    return;
  }
  std::strncpy(dst, "?", n);
}

bool gil_held() { return g_py.is_initialized() != 0 && g_py.gil_check() == 1; }

// co_filename of a code object, for policy::code_owner's first lookup of it.
void iframe_code_file(const void* code, char* buf, size_t n) {
  copy_ascii(buf, n, reinterpret_cast<const void*>(word(code, g_layout.filename_off)));
}
void copy_text(char* dst, size_t n, PyObj* obj);
void api_code_file(const void* code, char* buf, size_t n) {
  PyObj* file = g_py.getattr(const_cast<PyObj*>(code), "co_filename");
  copy_text(buf, n, file);
  if (file) g_py.decref(file);
}
bool is_user(policy::FrameOwner o) { return o == policy::FrameOwner::user || o == policy::FrameOwner::unknown; }
constexpr int kUserSearchDepth = 48;  // frames walked out from the innermost one to find the user's

void locate(recorder::PyLocation& out) {
  if (g_py.is_initialized() == 0) return;
  if (g_py.iframe_line != nullptr) {  // 3.12, 3.13: with or without the GIL, no line yet
    if (const void* f = current_iframe()) {
      // The site is the innermost frame of the user's code (policy/user_frame.h): walk out
      // past the frameworks' and the standard library's frames, one cached lookup each.
      const void* site = f;
      if (g_layout.filename_off >= 0) {
        const void* p = f;
        for (int guard = 0; p != nullptr && guard < kUserSearchDepth; ++guard, p = reinterpret_cast<const void*>(word(p, kPrevOff)))
          if (is_python_frame(p) && is_user(policy::code_owner(reinterpret_cast<const void*>(word(p, 0)), iframe_code_file))) {
            site = p;
            break;
          }
      }
      out.code = reinterpret_cast<const void*>(word(site, 0));
      out.ip = reinterpret_cast<const void*>(word(site, kInstrOff));
      return;
    }
  }
  if (g_py.gil_check() == 1) {
    PyObj* frame = g_py.get_frame();
    if (frame == nullptr) return;
    PyObj* code = g_py.frame_code(frame);
    out.code = code;  // identity only
    out.line = g_py.line_number(frame);
    // Out to the user's frame (frame_back gives new references).
    PyObj* owned = nullptr;
    for (int guard = 0; guard < kUserSearchDepth && !is_user(policy::code_owner(code, api_code_file)); ++guard) {
      PyObj* back = g_py.frame_back(frame);
      g_py.decref(code);
      code = nullptr;
      if (owned) g_py.decref(owned);
      owned = back;
      frame = back;
      if (frame == nullptr) break;
      code = g_py.frame_code(frame);
      if (is_user(policy::code_owner(code, api_code_file))) {
        out.code = code;
        out.line = g_py.line_number(frame);
        break;
      }
    }
    if (code) g_py.decref(code);
    if (owned) g_py.decref(owned);
    return;
  }
}

void copy_text(char* dst, size_t n, PyObj* obj) {
  const char* s = obj ? g_py.utf8(obj) : nullptr;
  if (s == nullptr) {
    g_py.err_clear();
    std::strncpy(dst, "?", n);
  } else {
    const size_t len = std::strlen(s);
    std::strncpy(dst, len >= n ? s + (len - n + 1) : s, n - 1);
  }
  dst[n - 1] = '\0';
}

int capture_with_gil(recorder::PyFrameText* frames, int max) {
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

int capture_without_gil(recorder::PyFrameText* frames, int max) {
  if (g_py.iframe_line == nullptr || g_layout.filename_off < 0) return 0;
  int n = 0;
  for (const void* f = current_iframe(); f != nullptr && n < max;) {
    const void* code = reinterpret_cast<const void*>(word(f, 0));
    if (is_python_frame(f)) {
      copy_ascii(frames[n].file, sizeof frames[n].file, reinterpret_cast<const void*>(word(code, g_layout.filename_off)));
      copy_ascii(frames[n].function, sizeof frames[n].function,
                 reinterpret_cast<const void*>(word(code, g_layout.filename_off + 8)));
      frames[n].line = g_py.iframe_line(const_cast<void*>(f));
      ++n;
    }
    f = reinterpret_cast<const void*>(word(f, kPrevOff));
  }
  return n;
}

int capture(recorder::PyFrameText* frames, int max) {
  if (g_py.is_initialized() == 0) return 0;
  // Read deeper than the site keeps, so that the user's frame is in it however many
  // framework frames lie under it (policy::keep_user_frame picks what is kept).
  recorder::PyFrameText all[kUserSearchDepth];
  const int n = gil_held() ? capture_with_gil(all, kUserSearchDepth) : capture_without_gil(all, kUserSearchDepth);
  return policy::keep_user_frame(all, n, frames, max);
}

std::atomic<int> g_state{0};  // 0 not looked, 3 installing, 1 ready, 2 absent

// The program's argv for policy::configure_user_frames, once, into a static buffer.
void read_program_argv() {
  static char buf[4096];
  static const char* argv[32];
  const int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  const ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return;
  buf[n] = '\0';
  int argc = 0;
  for (ssize_t i = 0; i < n && argc < 32; i += static_cast<ssize_t>(std::strlen(buf + i)) + 1) argv[argc++] = buf + i;
  policy::configure_user_frames(argv, argc);
}

}  // namespace

void install_python_readers() {
  int expected = 0;
  if (!g_state.compare_exchange_strong(expected, 3)) return;
  const char* off = std::getenv("CUDASHIM_PYTHON_STACKS");
  if (off != nullptr && std::strcmp(off, "0") == 0) {
    g_state.store(2);
    return;
  }
  PyApi a{};
  const bool ok = find_global(a.is_initialized, "Py_IsInitialized") && find_global(a.gil_check, "PyGILState_Check") &&
                  find_global(a.get_frame, "PyEval_GetFrame") && find_global(a.line_number, "PyFrame_GetLineNumber") &&
                  find_global(a.frame_code, "PyFrame_GetCode") && find_global(a.frame_back, "PyFrame_GetBack") &&
                  find_global(a.decref, "Py_DecRef") && find_global(a.getattr, "PyObject_GetAttrString") &&
                  find_global(a.utf8, "PyUnicode_AsUTF8") && find_global(a.err_clear, "PyErr_Clear");
  if (ok) {
    // The GIL-free reader: 3.12 and 3.13 only, and only with every piece present.
    const auto* version = static_cast<const unsigned long*>(real_dl().dlsym(RTLD_DEFAULT, "Py_Version"));
    a.version = version ? *version : 0;
    const unsigned long mm = a.version >> 16;
    if ((mm == 0x030C || mm == 0x030D) && find_global(a.this_tstate, "PyGILState_GetThisThreadState") &&
        find_global(a.iframe_line, "PyUnstable_InterpreterFrame_GetLine")) {
      a.code_type = real_dl().dlsym(RTLD_DEFAULT, "PyCode_Type");
      a.str_type = real_dl().dlsym(RTLD_DEFAULT, "PyUnicode_Type");
      a.bytes_type = real_dl().dlsym(RTLD_DEFAULT, "PyBytes_Type");
      a.tuple_type = real_dl().dlsym(RTLD_DEFAULT, "PyTuple_Type");
      if (!a.code_type || !a.str_type || !a.bytes_type || !a.tuple_type) a.iframe_line = nullptr;
    } else {
      a.iframe_line = nullptr;
    }
    g_py = a;
    read_program_argv();
    recorder::g_py_capture.store(capture, std::memory_order_release);
    recorder::g_py_locate.store(locate, std::memory_order_release);
  }
  g_state.store(ok ? 1 : 2, std::memory_order_release);
}

}  // namespace cudashim::shim
