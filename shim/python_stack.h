// python_stack.h: the Python location of a thread, read by the shim (shim/python_stack.cpp).
#pragma once
#include "recorder/callsites.h"

namespace cudashim::shim {

// Installs the Python-stack readers when CPython is in the process (idempotent;
// called lazily from observe()): recorder::g_py_locate and g_py_capture.
void install_python_readers();

// The main thread's Python location as a waiter's site would have it (shim/wait_sampler.h): the
// innermost frame of the user's code in `loc`, and the main thread's frames as text (what
// policy::keep_user_frame keeps) in `frames`. Returns how many frames (with `frames` nullptr, the
// location only: 1 when it was read); 0 when it cannot be read:
// no CPython, a version or build without the GIL-free reader, its layout not yet checked on a
// real frame, the interpreter finalizing, or no frame of Python code on the main thread.
// Not for a hook's path: it takes the GIL (PyGILState_Ensure), so that the main thread, which
// must have released it, cannot push or pop a frame while they are read, and reads every word of
// that thread through process_vm_readv. Only on the wait sampler's own thread.
int read_main_thread(recorder::PyLocation& loc, recorder::PyFrameText* frames, int max);

}  // namespace cudashim::shim
