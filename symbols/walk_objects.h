// walk_objects.h: cudashim's own calls into the dynamic loader, serialized with fork().
//
// glibc's fork() resets the loader's main lock in the child, but neither the lock that
// dl_iterate_phdr holds while it runs (dl_load_write_lock; glibc 2.36 posix/fork.c) nor the
// debugger's view of the link map (r_debug.r_state, RT_ADD while a dlopen maps an object).
// A child forked while one of cudashim's threads was inside such a call inherits that state
// from a thread it does not have: its first dl_iterate_phdr waits forever, and its first
// dlopen aborts ("Inconsistency detected by ld.so: dl-open.c: dl_open_worker_begin:
// Assertion `r_state == RT_CONSISTENT'"): every os.fork child of a Python job whose parent had
// just made its first CUDA call died so (the GPU sampler's thread loading NVML at that moment).
// So each of our loader calls (the walks, dlopen and dlclose, the unwinder's first use) holds
// loader_gate() for reading, and the shim's pthread_atfork prepare handler (shim/init.cpp)
// takes it for writing: a fork waits until our loader calls have ended. Readers may nest (a
// library's constructor run by our dlopen may reach another of ours): glibc's default rwlock
// prefers readers, so a nested read never waits for the fork's pending write.
#pragma once
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>

#include <string>
#include <vector>

namespace cudashim::symbols {

// Constant-initialized: no guard (tests/hygiene/check_guards.py).
inline pthread_rwlock_t* loader_gate() {
  static pthread_rwlock_t gate = PTHREAD_RWLOCK_INITIALIZER;
  return &gate;
}

// Holds loader_gate() for reading over one of cudashim's own loader calls. Never in a signal handler.
class LoaderCall {
 public:
  LoaderCall() { pthread_rwlock_rdlock(loader_gate()); }
  ~LoaderCall() { pthread_rwlock_unlock(loader_gate()); }
  LoaderCall(const LoaderCall&) = delete;
  LoaderCall& operator=(const LoaderCall&) = delete;
};

// dl_iterate_phdr(callback, data) inside a LoaderCall. The callback must not fork.
inline int walk_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* data) {
  LoaderCall gate;
  return dl_iterate_phdr(callback, data);
}

// dlopen(file, mode | RTLD_NOLOAD) and its dlclose, inside a LoaderCall: the handle of a loaded
// object, or nullptr. Give a non-null handle back with close_loaded().
inline void* open_loaded(const char* file, int mode) {
  LoaderCall gate;
  return dlopen(file, mode | RTLD_NOLOAD);
}
inline int close_loaded(void* handle) {
  LoaderCall gate;
  return dlclose(handle);
}

// The path of every loaded object that has one (not the main program, not the vDSO), in load order.
inline std::vector<std::string> loaded_object_paths() {
  std::vector<std::string> out;
  walk_objects(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &out);
  return out;
}

}  // namespace cudashim::symbols
