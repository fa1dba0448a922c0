// python_stack.cpp: the calling thread's Python location.
//
// Two readers, both through symbols resolved at run time (no libpython link; a
// process without Python gets none):
//  - With the GIL held (PyGILState_Check): the public C API (PyEval_GetFrame, ...).
//  - Without it, on CPython 3.10 to 3.14: PyTorch releases the GIL inside nearly
//    every op (.item(), nonzero, synchronize), so the thread that called the hooked
//    function is blocked in C code, and its own Python frames cannot change under
//    us. We read them without allocating and without touching reference counts, the
//    way sampling profilers do: tstate -> current frame -> code object, with one
//    layout per minor version (kLayouts below: 3.10's PyFrameObject, 3.11's
//    _PyInterpreterFrame behind the _PyCFrame, 3.12's, 3.13's, 3.14's with a tagged
//    f_executable). The layout is checked once by reading through process_vm_readv
//    (a bad guess is an EFAULT, never a crash), and each frame is checked against
//    PyCode_Type (3.10: PyFrame_Type too) on every read. The line comes from the
//    interpreter's own decoder: PyCode_Addr2Line (3.10, 3.11),
//    PyUnstable_InterpreterFrame_GetLine (3.12+); both only read the line table.
//    Another minor version (3.9, 3.15, a free-threaded build) gets no GIL-free
//    reader at all: no line rather than a wrong one.
//    This reader is also used while the GIL is held: PyEval_GetFrame would
//    materialize a frame object (3.11+: which the interpreter must then copy the frame
//    into when the function returns) and PyFrame_GetLineNumber decodes the line table
//    on every call. A hit is keyed by (code object, instruction): the line is read
//    once, when the site's stacks are captured at its first hit; that capture reads
//    every word through process_vm_readv, the per-hit lookup (locate, on the hooks'
//    hot path: no syscall) reads the calling thread's own frames directly, past the
//    checks above.
//    Entry frames that delimit C and Python stacks (3.12+: owner FRAME_OWNED_BY_CSTACK,
//    3.14 also FRAME_OWNED_BY_INTERPRETER; their code is the "<shim>" code object or
//    None) are skipped.
//  - Another thread's (read_main_thread, for the wait sampler, shim/wait_sampler.h): the main
//    thread's frames, read with the same layouts through process_vm_readv while this thread
//    holds the GIL (which the main thread, asleep in a wait, has released).
//    CUDASHIM_PYTHON_STACKS=0 turns every reader off.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "policy/user_frame.h"
#include "recorder/callsites.h"
#include "shim/log.h"
#include "shim/real_dl.h"
#include "shim/python_stack.h"

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
  // GIL-free reader
  void* (*this_tstate)();                  // PyGILState_GetThisThreadState
  int (*iframe_line)(void*);               // PyUnstable_InterpreterFrame_GetLine (3.12+)
  int (*addr2line)(const void*, int);      // PyCode_Addr2Line(code, byte offset) (3.10, 3.11)
  const void* code_type;                   // &PyCode_Type
  const void* str_type;                    // &PyUnicode_Type
  const void* frame_type;                  // &PyFrame_Type (3.10: every frame is one)
  // Another thread's frames (read_main_thread)
  int (*gil_ensure)();                     // PyGILState_Ensure (its enum as an int)
  void (*gil_release)(int);                // PyGILState_Release
  void* (*interp_main)();                  // PyInterpreterState_Main
  void* (*thread_head)(void*);             // PyInterpreterState_ThreadHead
  int (*finalizing)();                     // Py_IsFinalizing (3.13+), _Py_IsFinalizing (3.10 to 3.12)
};
PyApi g_py;

// How the GIL-free reader finds the line of a frame.
enum class LineFrom : char {
  kLasti,       // 3.10: PyCode_Addr2Line(code, 2 * f_lasti)
  kCodeOffset,  // 3.11: PyCode_Addr2Line(code, prev_instr - co_code_adaptive)
  kFrameApi,    // 3.12+: PyUnstable_InterpreterFrame_GetLine(frame)
};

// One CPython minor version, x86-64, default (GIL) build: the offsets of
// Include/cpython/pystate.h, Include/internal/pycore_frame.h (3.14:
// pycore_interpframe_structs.h), Include/cpython/code.h and unicodeobject.h, checked
// with offsetof against the headers of 3.10.13, 3.11.7, 3.12.1, 3.13.0 and 3.14.10.
struct FrameLayout {
  unsigned minor;       // 3.<minor>
  int tstate_off;       // PyThreadState: the current frame (3.10 frame, 3.13+ current_frame) or the cframe pointer
  int cframe_off;       // _PyCFrame.current_frame (3.11: 8, 3.12: 0); -1: tstate_off holds the frame itself
  bool frame_object;    // 3.10: a frame is a PyFrameObject (its ob_type is PyFrame_Type)
  int code_off;         // the frame's code object (3.14: a _PyStackRef, tag bits below)
  uintptr_t tag_bits;   // 3.14: Py_TAG_BITS of a stack reference (1: a deferred reference)
  int back_off;         // the next outer frame (f_back, previous)
  int instr_off;        // 3.10: int f_lasti, in code units; else the instruction pointer
  int owner_off;        // char owner (3.11+); -1 where frames have none
  int code_units_off;   // PyCodeObject.co_code_adaptive (3.11)
  int filename_off;     // PyCodeObject.co_filename; co_name is the next word
  int ascii_data_off;   // sizeof(PyASCIIObject): where a compact ASCII str's text starts
  LineFrom line;
};
constexpr FrameLayout kLayouts[] = {
    // minor tstate cframe fobj  code tag back instr owner units file ascii line
    {10, 24, -1, true, 32, 0, 24, 96, -1, 0, 104, 48, LineFrom::kLasti},
    {11, 56, 8, false, 32, 0, 48, 56, 69, 184, 112, 48, LineFrom::kCodeOffset},
    {12, 56, 0, false, 0, 0, 8, 56, 70, 0, 112, 40, LineFrom::kFrameApi},
    {13, 72, -1, false, 0, 0, 8, 56, 70, 0, 112, 40, LineFrom::kFrameApi},
    {14, 72, -1, false, 0, 1, 8, 56, 74, 0, 112, 40, LineFrom::kFrameApi},
};
constexpr char kFirstEntryOwner = 3;  // 3.12, 3.13: FRAME_OWNED_BY_CSTACK; 3.14: BY_INTERPRETER, then BY_CSTACK
constexpr int kTypeOff = 8;           // PyObject.ob_type
constexpr int kSizeOff = 16;          // PyVarObject.ob_size (a code object's length in code units, 3.11)
constexpr int kStrLengthOff = 16;     // PyASCIIObject.length
constexpr int kStrStateOff = 32;      // PyASCIIObject.state
constexpr unsigned kCompactAscii = (1u << 5) | (1u << 6);
constexpr int kMaxWalk = 64;          // frames looked at outward from the innermost
constexpr int kNextThreadOff = 8;     // PyThreadState.next (prev, next, interp: 3.10 to 3.14)

const FrameLayout* g_layout = nullptr;       // this process's minor version; nullptr: no GIL-free reader
std::atomic<int> g_probes{0};
std::atomic<int> g_checked{0};               // 0 not yet, 1 the layout held on a real frame, 2 given up

// Copies n bytes at `addr` of this process without faulting: false on an unmapped address.
bool safe_copy(void* dst, const void* addr, size_t n) {
  if (addr == nullptr) return false;
  iovec local{dst, n}, remote{const_cast<void*>(addr), n};
  return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

// Reads the word at base + off, directly (kSafe false: the hot path, past the checks) or
// through process_vm_readv (kSafe true: the layout check and the first-hit capture).
template <bool kSafe>
bool load(const void* base, int off, uintptr_t& out) {
  const void* at = static_cast<const char*>(base) + off;
  if constexpr (kSafe) {
    return base != nullptr && safe_copy(&out, at, sizeof out);
  } else {
    std::memcpy(&out, at, sizeof out);  // one mov; the owner byte's word is not aligned
    return true;
  }
}

template <bool kSafe>
bool has_type(const void* obj, const void* type) {
  uintptr_t t = 0;
  return obj != nullptr && load<kSafe>(obj, kTypeOff, t) && reinterpret_cast<const void*>(t) == type;
}

// The code object of frame f, or nullptr when it has none (3.13+: f_executable may be None).
template <bool kSafe>
const void* code_of(const void* f) {
  uintptr_t c = 0;
  if (!load<kSafe>(f, g_layout->code_off, c)) return nullptr;
  const void* code = reinterpret_cast<const void*>(c & ~g_layout->tag_bits);
  return has_type<kSafe>(code, g_py.code_type) ? code : nullptr;
}

// A frame of Python code and its code object.
struct PyFrame {
  const void* frame = nullptr;
  const void* code = nullptr;
};

// f's code object when f is a frame of Python code (a code object, not an entry frame), else nullptr.
template <bool kSafe>
const void* python_code_of(const void* f) {
  const FrameLayout& l = *g_layout;
  if (l.frame_object && !has_type<kSafe>(f, g_py.frame_type)) return nullptr;
  const void* code = code_of<kSafe>(f);
  if (code == nullptr || l.owner_off < 0) return code;
  uintptr_t w = 0;  // the owner byte is the low byte of the word at owner_off (little-endian)
  return load<kSafe>(f, l.owner_off, w) && static_cast<char>(w & 0xff) < kFirstEntryOwner ? code : nullptr;
}

template <bool kSafe>
const void* outer(const void* f) {
  uintptr_t b = 0;
  return load<kSafe>(f, g_layout->back_off, b) ? reinterpret_cast<const void*>(b) : nullptr;
}

// The first Python frame at or outside f; {} when none.
template <bool kSafe>
PyFrame python_frame_from(const void* f) {
  for (int guard = 0; f != nullptr && guard < kMaxWalk; ++guard, f = outer<kSafe>(f))
    if (const void* code = python_code_of<kSafe>(f)) return {f, code};
  return {};
}

// The thread state's innermost frame (not yet checked to be Python code).
template <bool kSafe>
const void* top_frame(const void* ts) {
  uintptr_t p = 0;
  if (!load<kSafe>(ts, g_layout->tstate_off, p) || p == 0) return nullptr;
  if (g_layout->cframe_off >= 0 && !load<kSafe>(reinterpret_cast<const void*>(p), g_layout->cframe_off, p)) return nullptr;
  return reinterpret_cast<const void*>(p);
}

// The frame's instruction: its identity within the code object, and what the line is read from.
template <bool kSafe>
uintptr_t instruction_of(const void* f) {
  uintptr_t w = 0;
  if (!load<kSafe>(f, g_layout->instr_off, w)) return 0;
  return g_layout->line == LineFrom::kLasti ? static_cast<uint32_t>(w) : w;  // 3.10: the int f_lasti alone
}

// Checks the version's layout on this thread's real frames, through process_vm_readv: the
// innermost Python frame's code object has a str file name and a str name.
bool layout_holds(const void* ts) {
  const void* code = python_frame_from<true>(top_frame<true>(ts)).code;
  uintptr_t file = 0, name = 0;
  return code != nullptr && load<true>(code, g_layout->filename_off, file) &&
         load<true>(code, g_layout->filename_off + 8, name) &&
         has_type<true>(reinterpret_cast<const void*>(file), g_py.str_type) &&
         has_type<true>(reinterpret_cast<const void*>(name), g_py.str_type);
}

// The innermost Python frame of this thread; {} when none. Hot path: direct reads once the
// layout held (a few safe reads before that, at most 16 tries in the process).
PyFrame current_iframe() {
  const int checked = g_checked.load(std::memory_order_acquire);
  if (checked == 2) return {};
  const void* ts = g_py.this_tstate();
  if (ts == nullptr) return {};
  if (checked == 0) {
    // A thread state with no frame at all (a C thread that took the GIL once, a thread
    // starting) tells nothing about the layout: no try is spent on it.
    if (top_frame<true>(ts) == nullptr) return {};
    if (!layout_holds(ts)) {
      if (g_probes.fetch_add(1, std::memory_order_relaxed) == 16) {
        g_checked.store(2, std::memory_order_release);
        log_message(LogLevel::info, "CPython 3.{}: its frames do not have the layout expected; Python lines only where the GIL is held",
                    g_layout->minor);
      }
      return {};
    }
    g_checked.store(1, std::memory_order_release);
  }
  return python_frame_from<false>(top_frame<false>(ts));
}

// The line of Python frame f (whose code object is `code`), 0 when it cannot be told.
int line_of(const void* f, const void* code) {
  const uintptr_t ip = instruction_of<true>(f);
  switch (g_layout->line) {
    case LineFrom::kLasti:
      return g_py.addr2line(code, 2 * static_cast<int32_t>(ip));  // f_lasti < 0: co_firstlineno
    case LineFrom::kCodeOffset: {
      uintptr_t units = 0;  // the code object's length, in 2-byte code units
      if (!load<true>(code, kSizeOff, units)) return 0;
      const intptr_t at = static_cast<intptr_t>(ip) -
                          static_cast<intptr_t>(reinterpret_cast<uintptr_t>(code) + g_layout->code_units_off);
      if (at < -2 || at >= static_cast<intptr_t>(2 * units)) return 0;  // -2: a frame not started yet
      return g_py.addr2line(code, static_cast<int>(at));
    }
    case LineFrom::kFrameApi:
      return g_py.iframe_line(const_cast<void*>(f));
  }
  return 0;
}

// Copies a compact ASCII str's text through process_vm_readv (no allocation, no
// refcount), keeping the tail of long paths; "?" for anything else.
void copy_ascii(char* dst, size_t n, const void* str) {
  uintptr_t len = 0, state = 0;
  if (has_type<true>(str, g_py.str_type) && load<true>(str, kStrLengthOff, len) &&
      load<true>(str, kStrStateOff, state) && (state & kCompactAscii) == kCompactAscii) {
    const size_t from = len >= n ? len - (n - 1) : 0;
    const size_t m = len - from;
    if (safe_copy(dst, static_cast<const char*>(str) + g_layout->ascii_data_off + from, m)) {
      dst[m] = '\0';
      return;
    }
  }
  std::strncpy(dst, "?", n);
}

bool gil_held() { return g_py.is_initialized() != 0 && g_py.gil_check() == 1; }

// co_filename of a code object, for policy::code_owner's first lookup of it.
void iframe_code_file(const void* code, char* buf, size_t n) {
  uintptr_t file = 0;
  if (load<true>(code, g_layout->filename_off, file))
    copy_ascii(buf, n, reinterpret_cast<const void*>(file));
  else
    std::strncpy(buf, "?", n);
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
  if (g_layout != nullptr) {  // 3.10 to 3.14: with or without the GIL, no line yet
    if (const PyFrame f = current_iframe(); f.frame != nullptr) {
      // The site is the innermost frame of the user's code (policy/user_frame.h): walk out
      // past the frameworks' and the standard library's frames, one cached lookup each.
      PyFrame site = f;
      PyFrame p = f;
      for (int guard = 0; p.frame != nullptr && guard < kUserSearchDepth;
           ++guard, p = python_frame_from<false>(outer<false>(p.frame)))
        if (is_user(policy::code_owner(p.code, iframe_code_file))) {
          site = p;
          break;
        }
      out.code = site.code;
      out.ip = reinterpret_cast<const void*>(instruction_of<false>(site.frame));
      out.inner = f.code;  // the frame that made the call: the walk's start, no read more
      return;
    }
  }
  if (g_py.gil_check() == 1) {
    PyObj* frame = g_py.get_frame();
    if (frame == nullptr) return;
    PyObj* code = g_py.frame_code(frame);
    out.code = code;  // identity only
    out.inner = code;
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

// The Python frames of thread state `ts` as text, innermost first, every word read through
// process_vm_readv; the layout must have held (g_checked == 1).
int capture_frames_of(const void* ts, recorder::PyFrameText* frames, int max) {
  int n = 0;
  for (PyFrame p = python_frame_from<true>(top_frame<true>(ts)); p.frame != nullptr && n < max;
       p = python_frame_from<true>(outer<true>(p.frame))) {
    const void *f = p.frame, *code = p.code;
    uintptr_t file = 0, name = 0;
    if (!load<true>(code, g_layout->filename_off, file) || !load<true>(code, g_layout->filename_off + 8, name)) break;
    copy_ascii(frames[n].file, sizeof frames[n].file, reinterpret_cast<const void*>(file));
    copy_ascii(frames[n].function, sizeof frames[n].function, reinterpret_cast<const void*>(name));
    frames[n].line = line_of(f, code);
    ++n;
  }
  return n;
}

int capture_without_gil(recorder::PyFrameText* frames, int max) {
  if (g_layout == nullptr || g_checked.load(std::memory_order_acquire) != 1) return 0;
  const void* ts = g_py.this_tstate();
  return ts == nullptr ? 0 : capture_frames_of(ts, frames, max);
}

int capture(recorder::PyFrameText* frames, int max, bool* warmup) {
  if (g_py.is_initialized() == 0) return 0;
  // Read deeper than the site keeps, so that the user's frame is in it however many
  // framework frames lie under it (policy::keep_user_frame picks what is kept), and so is
  // a compile frame (TorchDynamo's, Inductor's autotuning) however deep it lies.
  recorder::PyFrameText all[kUserSearchDepth];
  const int n = gil_held() ? capture_with_gil(all, kUserSearchDepth) : capture_without_gil(all, kUserSearchDepth);
  if (warmup != nullptr) *warmup = policy::warmup_frame_in(all, n) >= 0;
  return policy::keep_user_frame(all, n, frames, max);
}

// The interpreter's minor version (3.<minor>), 0 when it is not CPython 3 or cannot be told:
// Py_Version (3.11+), else the text of Py_GetVersion ("3.10.13 (main, ...").
unsigned python_minor() {
  if (const auto* v = static_cast<const unsigned long*>(real_dl().dlsym(RTLD_DEFAULT, "Py_Version")))
    return (*v >> 24) == 3 ? static_cast<unsigned>((*v >> 16) & 0xff) : 0;
  const char* (*get_version)() = nullptr;
  if (!find_global(get_version, "Py_GetVersion")) return 0;
  const char* s = get_version();
  if (s == nullptr || s[0] != '3' || s[1] != '.') return 0;
  unsigned minor = 0;
  for (s += 2; *s >= '0' && *s <= '9' && minor < 1000; ++s) minor = minor * 10 + static_cast<unsigned>(*s - '0');
  return *s == '.' ? minor : 0;
}

// This minor version's layout, or nullptr (another version: no GIL-free reader).
const FrameLayout* layout_for(unsigned minor) {
  for (const FrameLayout& l : kLayouts)
    if (l.minor == minor) return &l;
  return nullptr;
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

// The main thread's state: the oldest of the main interpreter's thread states, the last of
// its list (a new thread state is put at the head: Python/pystate.c), read through
// process_vm_readv (a thread state freed meanwhile is a bad read, not a fault).
const void* main_thread_state() {
  void* interp = g_py.interp_main();
  const void* ts = interp != nullptr ? g_py.thread_head(interp) : nullptr;
  for (int guard = 0; ts != nullptr && guard < 4096; ++guard) {
    uintptr_t next = 0;
    if (!load<true>(ts, kNextThreadOff, next)) return nullptr;
    if (next == 0) return ts;
    ts = reinterpret_cast<const void*>(next);
  }
  return nullptr;
}

// read_main_thread under the GIL: the user's innermost frame of thread state `ts` and its frames.
int read_thread(const void* ts, recorder::PyLocation& loc, recorder::PyFrameText* frames, int max) {
  if (g_checked.load(std::memory_order_acquire) == 0) {  // no hook has seen a Python frame yet
    if (!layout_holds(ts)) return 0;
    g_checked.store(1, std::memory_order_release);
  }
  const PyFrame innermost = python_frame_from<true>(top_frame<true>(ts));
  if (innermost.frame == nullptr) return 0;
  PyFrame site = innermost;
  PyFrame p = innermost;
  for (int guard = 0; p.frame != nullptr && guard < kUserSearchDepth; ++guard, p = python_frame_from<true>(outer<true>(p.frame)))
    if (is_user(policy::code_owner(p.code, iframe_code_file))) {
      site = p;
      break;
    }
  loc.code = site.code;
  loc.ip = reinterpret_cast<const void*>(instruction_of<true>(site.frame));
  if (frames == nullptr || max <= 0) return 1;  // the location only
  recorder::PyFrameText all[kUserSearchDepth];
  const int n = capture_frames_of(ts, all, kUserSearchDepth);
  return policy::keep_user_frame(all, n, frames, max);
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
    // The GIL-free reader: a known minor version, with every piece present.
    const unsigned minor = python_minor();
    const FrameLayout* layout = layout_for(minor);
    const bool api = layout != nullptr && (layout->line == LineFrom::kFrameApi
                                               ? find_global(a.iframe_line, "PyUnstable_InterpreterFrame_GetLine")
                                               : find_global(a.addr2line, "PyCode_Addr2Line"));
    if (api && find_global(a.this_tstate, "PyGILState_GetThisThreadState")) {
      a.code_type = real_dl().dlsym(RTLD_DEFAULT, "PyCode_Type");
      a.str_type = real_dl().dlsym(RTLD_DEFAULT, "PyUnicode_Type");
      a.frame_type = real_dl().dlsym(RTLD_DEFAULT, "PyFrame_Type");
      // A free-threaded build (3.13t, 3.14t) puts ob_tid and its reference counts before
      // ob_type: there the word at ob_type's place in PyCode_Type is not &PyType_Type.
      const void* type_type = real_dl().dlsym(RTLD_DEFAULT, "PyType_Type");
      if (a.code_type != nullptr && a.str_type != nullptr && (a.frame_type != nullptr || !layout->frame_object) &&
          has_type<true>(a.code_type, type_type))
        g_layout = layout;
    }
    if (g_layout == nullptr)  // once per process: no line rather than a wrong one
      log_message(LogLevel::info, "CPython 3.{}: no frame reader for this version or build; Python lines only where the GIL is held",
                  minor);
    // read_main_thread's: optional (without them the wait sampler finds nothing).
    find_global(a.gil_ensure, "PyGILState_Ensure");
    find_global(a.gil_release, "PyGILState_Release");
    find_global(a.interp_main, "PyInterpreterState_Main");
    find_global(a.thread_head, "PyInterpreterState_ThreadHead");
    if (!find_global(a.finalizing, "Py_IsFinalizing")) find_global(a.finalizing, "_Py_IsFinalizing");
    g_py = a;
    read_program_argv();
    recorder::g_py_capture.store(capture, std::memory_order_release);
    recorder::g_py_locate.store(locate, std::memory_order_release);
  }
  g_state.store(ok ? 1 : 2, std::memory_order_release);
}

int read_main_thread(recorder::PyLocation& loc, recorder::PyFrameText* frames, int max) {
  if (g_state.load(std::memory_order_acquire) != 1 || g_layout == nullptr || g_checked.load(std::memory_order_acquire) == 2 ||
      g_py.gil_ensure == nullptr || g_py.gil_release == nullptr || g_py.interp_main == nullptr ||
      g_py.thread_head == nullptr || g_py.finalizing == nullptr)
    return 0;
  // Taking the GIL once the interpreter finalizes would end this thread (3.10 to 3.13) or hang
  // it (3.14): it is not taken then. A finalization that starts after this test does the same
  // to this thread only (the sampler's own), never to the program's.
  if (g_py.is_initialized() == 0 || g_py.finalizing() != 0) return 0;
  const int gil = g_py.gil_ensure();
  const void* ts = main_thread_state();
  const int n = ts != nullptr ? read_thread(ts, loc, frames, max) : 0;
  g_py.gil_release(gil);
  return n;
}

}  // namespace cudashim::shim
