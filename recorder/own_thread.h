// own_thread.h: starting one of cudashim's own threads inside the program (the flush thread,
// recorder/event_stream.cpp; the wait sampler, shim/wait_sampler.cpp).
#pragma once
#include <cstddef>

namespace cudashim::recorder {

// Starts `fn(nullptr)` on a detached thread named `name` (at most 15 characters, what
// pthread_setname_np takes) with a stack of `stack_bytes`. It is created with every signal
// blocked, so no signal of the program's is ever delivered to it; the caller's mask is back
// as it was on return. Returns false when the thread could not be created.
bool start_own_thread(void* (*fn)(void*), const char* name, size_t stack_bytes);

}  // namespace cudashim::recorder
