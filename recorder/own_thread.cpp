// own_thread.cpp: starting one of cudashim's own threads (recorder/own_thread.h).
#include "recorder/own_thread.h"

#include <pthread.h>
#include <signal.h>

#include "recorder/own_cost.h"

namespace cudashim::recorder {
namespace {

using ThreadFn = void* (*)(void*);

// Runs the thread's function between own_thread_begin and own_thread_end, so that its CPU
// time counts as cudashim's own (recorder/own_cost.h).
void* run_own(void* arg) {
  own_thread_begin();
  void* r = reinterpret_cast<ThreadFn>(arg)(nullptr);
  own_thread_end();
  return r;
}

}  // namespace

bool start_own_thread(void* (*fn)(void*), const char* name, size_t stack_bytes) {
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);  // the new thread inherits this mask
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, stack_bytes);
  const bool started = pthread_create(&th, &attr, run_own, reinterpret_cast<void*>(fn)) == 0;
  if (started) pthread_setname_np(th, name);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return started;
}

}  // namespace cudashim::recorder
