// backtrace.h: the native stack of the thread that writes the flight record, as raw
// addresses and the module file each lies in, rendered without allocating (signal context).
//
// How, and why this way:
// - The stack is walked by libgcc's unwinder (_Unwind_Backtrace, linked in statically, as
//   recorder/callsites.cpp uses it), from the handler, through the kernel's signal frame
//   (libgcc's x86_64/aarch64 Linux fallback recognizes the sigreturn trampoline). It is not
//   on signal-safety(7)'s list: its one-time set-up (a pthread_once that fills its register
//   table) may not run in a handler, so backtrace_prepare() runs it once beforehand, at the
//   first CUDA use; after that a walk allocates nothing and takes no lock of its own (its
//   FDE lookup walks dl_iterate_phdr, whose loader lock is recursive: a fault inside the
//   loader on this thread does not deadlock). Frame pointers are not walked: the CUDA
//   libraries, libc and most wheels are built without them. glibc's backtrace() is libgcc's
//   unwinder again, behind a dlopen of libgcc_s on first use.
// - The module of each address comes from /proc/self/maps, read with open/read/close
//   (async-signal-safe) into a fixed buffer at the moment of the fault, not from a table
//   built earlier: a library dlopened after that table would be missing, and refreshing a
//   table needs dl_iterate_phdr on some thread at some rate. What is recorded per frame is
//   the file offset of the address (address - mapping start + mapping offset), which
//   `cudashim report` turns back into a link-time address through the file's PT_LOAD
//   segments, with the module's path and load base (the address of its file offset 0).
#pragma once
#include <cstddef>

namespace cudashim::recorder {

// Runs the unwinder once so that its one-time set-up is done before a handler needs it.
// Call outside any signal handler (the first CUDA use); cheap and idempotent after that.
void backtrace_prepare();

// Writes `, "backtrace": {"frames": [...], "modules": [...]}` (docs/crash-schema.md) into
// `buf` (at most `cap` bytes; cut short, it ends at the last whole frame) for the calling
// thread. In a signal handler the walk starts at the interrupted instruction (the first
// signal frame), else at the caller of the record writer. Returns the bytes written.
// Async-signal-safe after backtrace_prepare(); no allocation, no lock.
size_t backtrace_json(char* buf, size_t cap);

}  // namespace cudashim::recorder
