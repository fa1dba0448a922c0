// fake_cudnn.cpp: a stand-in for cuDNN 9's libcudnn_graph.so.9 whose version API must never be
// called by cudashim (tests/preload/version_probe.py): the real one crashed when the shim's
// thread called it in a program that had loaded cuDNN without using it. Here a call says so
// on stderr and aborts.
#include <unistd.h>

#include <cstddef>
#include <cstdlib>

extern "C" __attribute__((visibility("default"))) size_t cudnnGetVersion() {
  const char msg[] = "fake cudnn: cudnnGetVersion was called\n";
  (void)!write(2, msg, sizeof msg - 1);
  abort();
}
