// walk_objects.h: dl_iterate_phdr for cudashim's own walks of the loaded objects,
// serialized with fork().
//
// glibc's fork() resets the loader's main lock in the child, but not the lock that
// dl_iterate_phdr holds while it runs (dl_load_write_lock; glibc 2.36 posix/fork.c).
// A child forked while one of cudashim's threads walks the loaded objects (the event
// stream's thread does every second, to see libraries come and go) would hang at its
// first dl_iterate_phdr: the report it writes at exit walks them too. The shim takes
// walk_mutex() in a pthread_atfork prepare handler (shim/init.cpp), so a fork waits
// until a walk of ours has ended, and releases it in the parent and the child.
#pragma once
#include <link.h>

#include <mutex>
#include <string>
#include <vector>

namespace cudashim::symbols {

inline std::mutex& walk_mutex() {
  static constinit std::mutex m;
  return m;
}

// dl_iterate_phdr(callback, data) under walk_mutex(). The callback must not fork or walk again.
inline int walk_objects(int (*callback)(dl_phdr_info*, size_t, void*), void* data) {
  std::lock_guard<std::mutex> lock(walk_mutex());
  return dl_iterate_phdr(callback, data);
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
