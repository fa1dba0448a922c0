// fake_truth.h: the test-double driver's own call counts, as ground truth.
// The harness (run_check.py --hooks) writes the hooked ABI names to the file named
// by CUDASHIM_TEST_HOOK_NAMES; for each driver name the double exports, the calls
// that really reached the double are what the shim must have counted.
#pragma once
#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "../fakecuda/fakecuda_control.h"

// Adds the double's nonzero counts of every hooked name to `calls`.
inline void add_driver_truth(std::map<std::string, unsigned long long>& calls) {
  const char* list = std::getenv("CUDASHIM_TEST_HOOK_NAMES");
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (list == nullptr || h == nullptr) {
    std::fprintf(stderr, "fake_truth: CUDASHIM_TEST_HOOK_NAMES unset or libcuda.so.1 not loaded\n");
    std::exit(6);
  }
  auto count = reinterpret_cast<fakecuda_call_count_fn>(dlsym(h, "fakecuda_call_count"));
  if (count == nullptr) {
    std::fprintf(stderr, "fake_truth: libcuda.so.1 is not the test double\n");
    std::exit(6);
  }
  std::ifstream f(list);
  for (std::string name; std::getline(f, name);)
    if (name.rfind("cu", 0) == 0 && name.rfind("cuda", 0) != 0)
      if (const uint64_t n = count(name.c_str())) calls[name] = n;
}
