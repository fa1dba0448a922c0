/* glibc_own.c: our own __wrap_NAME for each CUDASHIM_GLIBC_OWN row of glibc_2_28.def:
 * symbols that glibc 2.28 exports under no name at all. Each one does what the newer
 * glibc does, with what 2.28 has. */
#define _GNU_SOURCE 1
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define HIDDEN __attribute__((visibility("hidden")))

/* --- stat and friends (glibc 2.33). Before, <sys/stat.h> called these with the
 * structure version _STAT_VER: 1 on x86-64 (_STAT_VER_LINUX), 0 on AArch64 (the generic
 * syscall ABI's _STAT_VER_KERNEL; glibc returns EINVAL for any other). On both, struct
 * stat and struct stat64 are the same. */
#if defined(__x86_64__)
enum { kStatVer = 1 };
#elif defined(__aarch64__)
enum { kStatVer = 0 };
#else
#error "compat/glibc_own.c: _STAT_VER known for x86-64 and AArch64 only"
#endif
extern int __xstat64(int ver, const char* path, struct stat64* buf);
extern int __lxstat64(int ver, const char* path, struct stat64* buf);
extern int __fxstat64(int ver, int fd, struct stat64* buf);
extern int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* buf, int flags);
_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "one stat structure (x86-64, AArch64)");

HIDDEN int __wrap_stat(const char* path, struct stat* buf) { return __xstat64(kStatVer, path, (struct stat64*)buf); }
HIDDEN int __wrap_stat64(const char* path, struct stat64* buf) { return __xstat64(kStatVer, path, buf); }
HIDDEN int __wrap_lstat(const char* path, struct stat* buf) { return __lxstat64(kStatVer, path, (struct stat64*)buf); }
HIDDEN int __wrap_lstat64(const char* path, struct stat64* buf) { return __lxstat64(kStatVer, path, buf); }
HIDDEN int __wrap_fstat(int fd, struct stat* buf) { return __fxstat64(kStatVer, fd, (struct stat64*)buf); }
HIDDEN int __wrap_fstat64(int fd, struct stat64* buf) { return __fxstat64(kStatVer, fd, buf); }
HIDDEN int __wrap_fstatat(int dirfd, const char* path, struct stat* buf, int flags) {
  return __fxstatat64(kStatVer, dirfd, path, (struct stat64*)buf, flags);
}
HIDDEN int __wrap_fstatat64(int dirfd, const char* path, struct stat64* buf, int flags) {
  return __fxstatat64(kStatVer, dirfd, path, buf, flags);
}

/* --- __libc_single_threaded (glibc 2.32): libstdc++ skips atomic reference counting
 * while it reads non-zero. Zero is always correct: "maybe more than one thread". */
HIDDEN char __wrap___libc_single_threaded = 0;

/* --- arc4random (glibc 2.36): std::random_device's default source. getrandom(2)
 * (Linux 3.17) as glibc does; /dev/urandom where the kernel refuses it. */
HIDDEN uint32_t __wrap_arc4random(void) {
  uint32_t v = 0;
  unsigned char* p = (unsigned char*)&v;
  size_t got = 0;
  while (got < sizeof v) {
    long n = syscall(SYS_getrandom, p + got, sizeof v - got, 0);
    if (n > 0) {
      got += (size_t)n;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (got == sizeof v) return v;
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd >= 0) {
    while (got < sizeof v) {
      ssize_t n = read(fd, p + got, sizeof v - got);
      if (n > 0) got += (size_t)n;
      else if (!(n < 0 && errno == EINTR)) break;
    }
    close(fd);
  }
  if (got == sizeof v) return v;
  struct timespec ts;  /* the kernel gave nothing: never fail, as glibc never does */
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^ (uint32_t)getpid();
}

/* --- _dl_find_object (glibc 2.35): libgcc's unwinder asks it for the .eh_frame_hdr
 * of the object holding a code address. Before 2.35 libgcc walked dl_iterate_phdr,
 * which is what this does (it takes the loader's lock, as that older libgcc did). */
struct find_object_ctx {
  uintptr_t pc;
  struct dl_find_object* out;
  int found;
};

static int find_object_cb(struct dl_phdr_info* info, size_t size, void* data) {
  struct find_object_ctx* c = (struct find_object_ctx*)data;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  const void* eh = NULL;
  int holds = 0;
  (void)size;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)* ph = &info->dlpi_phdr[i];
    const uintptr_t a = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) {
      if (a < lo) lo = a;
      if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
      if (c->pc >= a && c->pc < a + ph->p_memsz) holds = 1;
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      eh = (const void*)a;
    }
  }
  if (!holds) return 0;
  memset(c->out, 0, sizeof *c->out);
  c->out->dlfo_map_start = (void*)lo;
  c->out->dlfo_map_end = (void*)hi;
  c->out->dlfo_eh_frame = (void*)eh;
  for (struct link_map* lm = _r_debug.r_map; lm != NULL; lm = lm->l_next)
    if (lm->l_addr == info->dlpi_addr && strcmp(lm->l_name, info->dlpi_name) == 0) {
      c->out->dlfo_link_map = lm;
      break;
    }
  c->found = 1;
  return 1;
}

HIDDEN int __wrap__dl_find_object(void* pc, struct dl_find_object* result) {
  struct find_object_ctx c = {(uintptr_t)pc, result, 0};
  dl_iterate_phdr(find_object_cb, &c);
  return c.found ? 0 : -1;
}
