/* qemu_exec.c: runs one AArch64 program under qemu-user, for the tests of the AArch64
 * tree on an x86-64 machine without binfmt_misc (a container, CI). Built for the host,
 * static, and copied once per program: the copy NAME reads NAME.qemu beside it (the
 * path of the running copy: /proc/self/exe), three lines:
 *     the qemu-aarch64 executable
 *     the guest root (-L: the arm64 libraries and the CPython of scripts/arm64_userland.sh)
 *     the AArch64 program
 * and execs `qemu-aarch64 -L ROOT [-E LD_PRELOAD=...] [-E LD_LIBRARY_PATH=...] PROGRAM ARGS...`.
 *
 * Why a static host program and not a script: LD_PRELOAD and LD_LIBRARY_PATH name AArch64
 * files. A shell (or a dynamically linked qemu) would hand them to the host's loader, which
 * prints "cannot be preloaded" on stderr; a static executable has no loader, and the two
 * are taken out of qemu's own environment and given to the guest with -E. exec, never
 * fork: the guest keeps the pid its parent knows (the report names it). Whatever the
 * guest execs must itself be a host program (such a copy): without binfmt_misc the
 * kernel cannot start an AArch64 file.
 * Exit 127 with one line when the sidecar or qemu cannot be used. */
#define _GNU_SOURCE 1
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void chomp(char* s) {
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r')) s[--n] = '\0';
}

int main(int argc, char** argv) {
  char self[4096], conf[4200], qemu[4096], root[4096], prog[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    fprintf(stderr, "qemu_exec: cannot read /proc/self/exe: %s\n", strerror(errno));
    return 127;
  }
  self[n] = '\0';
  snprintf(conf, sizeof conf, "%s.qemu", self);
  FILE* f = fopen(conf, "r");
  if (f == NULL || !fgets(qemu, sizeof qemu, f) || !fgets(root, sizeof root, f) || !fgets(prog, sizeof prog, f)) {
    fprintf(stderr, "qemu_exec: %s: not three lines (qemu, guest root, program)\n", conf);
    return 127;
  }
  fclose(f);
  chomp(qemu);
  chomp(root);
  chomp(prog);

  char** args = calloc((size_t)argc + 16, sizeof *args);
  int k = 0;
  args[k++] = qemu;
  args[k++] = "-L";
  args[k++] = root;
  static const char* const kGuestOnly[] = {"LD_PRELOAD", "LD_LIBRARY_PATH"};
  for (size_t i = 0; i < sizeof kGuestOnly / sizeof *kGuestOnly; ++i) {
    const char* v = getenv(kGuestOnly[i]);
    if (v == NULL) continue;
    size_t len = strlen(kGuestOnly[i]) + strlen(v) + 2;
    char* kv = malloc(len);
    snprintf(kv, len, "%s=%s", kGuestOnly[i], v);
    args[k++] = "-E";
    args[k++] = kv;
    unsetenv(kGuestOnly[i]);
  }
  args[k++] = prog;
  for (int i = 1; i < argc; ++i) args[k++] = argv[i];
  args[k] = NULL;
  execv(qemu, args);
  fprintf(stderr, "qemu_exec: cannot run %s: %s\n", qemu, strerror(errno));
  return 127;
}
