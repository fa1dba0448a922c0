// backtrace.cpp: see backtrace.h. Everything here runs in a signal handler: static
// buffers, no allocation, no stdio, no locks; only open, read, close and stat.
#include "recorder/backtrace.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <unwind.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "recorder/utf8.h"

namespace cudashim::recorder {
namespace {

constexpr int kMaxFrames = 64;
constexpr int kMaxModules = 32;
constexpr size_t kMaxPath = 1024;

struct Frame {
  uintptr_t ip = 0;
  bool signal_frame = false;  // the interrupted instruction itself, not a return address
  int module = -1;            // index in g_modules, -1 when no file mapping holds it
  uint64_t file_offset = 0;
};

struct Module {
  char path[kMaxPath];
  uintptr_t base;  // the address of its file offset 0 (mapping start - mapping offset)
};

// Static: a handler's stack may be small (sigaltstack), and nothing here may allocate.
Frame g_frames[kMaxFrames];
int g_nframes = 0;
Module g_modules[kMaxModules];
int g_nmodules = 0;
char g_line[kMaxPath + 128];
char g_chunk[4096];

_Unwind_Reason_Code collect(_Unwind_Context* ctx, void*) {
  if (g_nframes >= kMaxFrames) return _URC_END_OF_STACK;
  int before_insn = 0;
  const uintptr_t ip = _Unwind_GetIPInfo(ctx, &before_insn);
  if (ip == 0) return _URC_END_OF_STACK;
  g_frames[g_nframes++] = {ip, before_insn != 0, -1, 0};
  return _URC_NO_REASON;
}

_Unwind_Reason_Code count_only(_Unwind_Context*, void* n) {
  return ++*static_cast<int*>(n) < 4 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

bool parse_hex(const char*& p, uint64_t& v) {
  v = 0;
  const char* start = p;
  for (;; ++p) {
    const char c = *p;
    if (c >= '0' && c <= '9') v = v << 4 | static_cast<uint64_t>(c - '0');
    else if (c >= 'a' && c <= 'f') v = v << 4 | static_cast<uint64_t>(c - 'a' + 10);
    else break;
  }
  return p != start;
}

void skip_field(const char*& p) {
  while (*p == ' ') ++p;
  while (*p != ' ' && *p != '\0') ++p;
}

int module_index(const char* path, uintptr_t base) {
  for (int i = 0; i < g_nmodules; ++i)
    if (std::strcmp(g_modules[i].path, path) == 0) return i;
  if (g_nmodules == kMaxModules) return -1;
  Module& m = g_modules[g_nmodules];
  std::strncpy(m.path, path, kMaxPath - 1);
  m.path[kMaxPath - 1] = '\0';
  m.base = base;
  return g_nmodules++;
}

// One line of /proc/self/maps: "start-end perms offset dev inode   path" (proc(5)).
void map_line(const char* p) {
  uint64_t start = 0, end = 0, offset = 0;
  if (!parse_hex(p, start) || *p++ != '-' || !parse_hex(p, end)) return;
  skip_field(p);  // perms
  while (*p == ' ') ++p;
  if (!parse_hex(p, offset)) return;
  skip_field(p);  // dev
  skip_field(p);  // inode
  while (*p == ' ') ++p;
  if (*p != '/') return;  // anonymous memory, [stack], [vdso]: no file to read symbols from
  for (int i = 0; i < g_nframes; ++i) {
    Frame& f = g_frames[i];
    if (f.module >= 0 || f.ip < start || f.ip >= end) continue;
    f.module = module_index(p, static_cast<uintptr_t>(start - offset));
    f.file_offset = f.ip - start + offset;
  }
}

// Assigns each frame its module from the mappings as they are now.
void find_modules() {
  g_nmodules = 0;
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  size_t len = 0;
  bool overlong = false;  // the rest of a line too long for g_line is skipped
  for (;;) {
    const ssize_t n = read(fd, g_chunk, sizeof g_chunk);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      const char c = g_chunk[i];
      if (c == '\n') {
        g_line[len] = '\0';
        if (!overlong) map_line(g_line);
        len = 0;
        overlong = false;
      } else if (len < sizeof g_line - 1) {
        g_line[len++] = c;
      } else {
        overlong = true;
      }
    }
  }
  close(fd);
}

struct Out {
  char* buf;
  size_t cap, n = 0;
  bool full = false;
  void raw(const char* s, size_t len) {
    if (full || len > cap - n) {
      full = true;
      return;
    }
    std::memcpy(buf + n, s, len);
    n += len;
  }
  void s(const char* t) { raw(t, std::strlen(t)); }
  void u(uint64_t v) {
    char tmp[24];
    int i = 24;
    do tmp[--i] = static_cast<char>('0' + v % 10); while ((v /= 10) && i > 0);
    raw(tmp + i, static_cast<size_t>(24 - i));
  }
  void i(int64_t v) {
    if (v < 0) s("-"), v = -v;
    u(static_cast<uint64_t>(v));
  }
  void hex(uint64_t v) {
    char tmp[20];
    int i = 20;
    do tmp[--i] = "0123456789abcdef"[v & 15]; while ((v >>= 4) && i > 2);
    tmp[--i] = 'x';
    tmp[--i] = '0';
    s("\"");
    raw(tmp + i, static_cast<size_t>(20 - i));
    s("\"");
  }
  // A file name as a JSON string: valid UTF-8 passes, every other byte is the text \xNN
  // (docs/report-schema.md, "Strings"); quotes, backslashes and controls are escaped.
  void str(const char* t) {
    static constexpr char kHex[] = "0123456789abcdef";
    s("\"");
    const std::string_view sv(t);
    for (size_t k = 0; k < sv.size();) {
      const auto c = static_cast<unsigned char>(sv[k]);
      const size_t len = utf8_sequence_length(sv.substr(k));
      if (len == 0) {
        const char e[] = {'\\', '\\', 'x', kHex[c >> 4], kHex[c & 15]};
        raw(e, sizeof e);
        ++k;
      } else if (c == '"' || c == '\\') {
        const char e[] = {'\\', static_cast<char>(c)};
        raw(e, 2);
        ++k;
      } else if (c < 0x20) {
        const char e[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        raw(e, sizeof e);
        ++k;
      } else {
        raw(sv.data() + k, len);
        k += len;
      }
    }
    s("\"");
  }
};

}  // namespace

void backtrace_prepare() {
  int n = 0;
  _Unwind_Backtrace(count_only, &n);
}

size_t backtrace_json(char* buf, size_t cap) {
  g_nframes = 0;
  _Unwind_Backtrace(collect, nullptr);
  find_modules();
  // In a handler: from the first signal frame (the faulting instruction). Else: past the
  // frames of cudashim itself (this writer and the hook that called it).
  int from = 0;
  const char* source = "caller";
  for (int k = 0; k < g_nframes; ++k)
    if (g_frames[k].signal_frame) {
      from = k;
      source = "signal_frame";
      break;
    }
  if (std::strcmp(source, "caller") == 0) {
    const int own = g_nframes > 0 ? g_frames[0].module : -1;  // frame 0 is this function
    while (from < g_nframes && g_frames[from].module == own) ++from;
  }
  // Room for the closing brackets is kept back, so the text stays JSON when cut short.
  constexpr size_t kTail = 64;
  if (cap < kTail * 2) return 0;
  Out o{buf, cap - kTail};
  o.s(",\n \"backtrace\": {\"source\": \"");
  o.s(source);
  o.s("\", \"frames\": [");
  for (int k = from; k < g_nframes; ++k) {
    const Frame& f = g_frames[k];
    const size_t mark = o.n;
    o.s(k == from ? "\n  " : ",\n  ");
    o.s("{\"address\": ");
    o.hex(f.ip);
    o.s(", \"pc\": ");
    o.s(f.signal_frame ? "true" : "false");
    o.s(", \"module\": ");
    o.i(f.module);
    o.s(", \"file_offset\": ");
    o.u(f.module >= 0 ? f.file_offset : 0);
    o.s("}");
    if (o.full) {
      o.n = mark;
      break;
    }
  }
  o.s("],\n  \"modules\": [");
  o.full = false;
  for (int m = 0; m < g_nmodules; ++m) {
    const size_t mark = o.n;
    struct stat st {};
    const bool known = stat(g_modules[m].path, &st) == 0;
    o.s(m == 0 ? "\n  " : ",\n  ");
    o.s("{\"index\": ");
    o.u(static_cast<uint64_t>(m));
    o.s(", \"path\": ");
    o.str(g_modules[m].path);
    o.s(", \"base\": ");
    o.hex(g_modules[m].base);
    o.s(", \"size\": ");
    o.u(known ? static_cast<uint64_t>(st.st_size) : 0);
    o.s(", \"mtime_ns\": ");
    o.i(known ? static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec : 0);
    o.s("}");
    if (o.full) {
      o.n = mark;
      break;
    }
  }
  o.cap += kTail;
  o.full = false;
  o.s("]}");
  return o.n;
}

}  // namespace cudashim::recorder
