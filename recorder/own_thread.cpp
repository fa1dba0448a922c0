// own_thread.cpp: starting one of cudashim's own threads (recorder/own_thread.h).
#include "recorder/own_thread.h"

#include <pthread.h>
#include <signal.h>

namespace cudashim::recorder {

bool start_own_thread(void* (*fn)(void*), const char* name, size_t stack_bytes) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the new thread inherits this mask
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, stack_bytes);
  const bool started = pthread_create(&th, &attr, fn, nullptr) == 0;
  if (started) pthread_setname_np(th, name);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return started;
}

}  // namespace cudashim::recorder
