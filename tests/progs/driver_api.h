// driver_api.h: a test program's view of the driver, filled through one of the
// resolution paths a real process uses. Shared by the preload test programs.
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

// How the program reaches the driver.
enum class Path { direct, dlsym, procaddr, procaddr_pt };

inline Path parse_path(const char* s) {
  if (!std::strcmp(s, "direct")) return Path::direct;
  if (!std::strcmp(s, "dlsym")) return Path::dlsym;
  if (!std::strcmp(s, "procaddr")) return Path::procaddr;
  if (!std::strcmp(s, "procaddr_pt")) return Path::procaddr_pt;
  std::fprintf(stderr, "unknown path '%s' (direct|dlsym|procaddr|procaddr_pt)\n", s);
  std::exit(2);
}

#define CHECK_CU(call)                                                               \
  do {                                                                               \
    CUresult r_ = (call);                                                            \
    if (r_ != CUDA_SUCCESS) {                                                        \
      std::fprintf(stderr, "%s:%d: %s returned %d\n", __FILE__, __LINE__, #call, r_); \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

// Resolves `base` (as a caller names it) to a function, by `path`. `abi` is the
// exact ABI name that path must end at; `expect` counts calls per exact ABI.
struct Resolver {
  Path path;
  void* handle = nullptr;
  PFN_cuGetProcAddress_v12000 gpa = nullptr;

  explicit Resolver(Path p) : path(p) {
    if (p == Path::direct) return;
    handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      std::fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
      std::exit(1);
    }
    if (p == Path::procaddr || p == Path::procaddr_pt) {
      gpa = reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(handle, "cuGetProcAddress_v2"));
      if (!gpa) std::exit(3);
    }
  }

  // Returns the function for `base` at `version`; `per_thread_ok` says whether
  // the per-thread flag applies (procaddr_pt asks for it on every lookup).
  void* get(const char* base, const char* abi, int version = CUDA_VERSION) {
    void* fn = nullptr;
    if (path == Path::dlsym) {
      fn = dlsym(handle, abi);
    } else {
      const cuuint64_t flags =
          path == Path::procaddr_pt ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
      CUdriverProcAddressQueryResult st{};
      CHECK_CU(gpa(base, &fn, version, flags, &st));
      if (st != CU_GET_PROC_ADDRESS_SUCCESS) std::exit(4);
    }
    if (!fn) {
      std::fprintf(stderr, "could not resolve %s (%s)\n", base, abi);
      std::exit(5);
    }
    return fn;
  }
};

// Prints {"expect": {abi: count, ...}, ...extra} on stdout for the harness.
inline void print_expectations(const std::map<std::string, unsigned long long>& calls, const std::string& extra) {
  std::printf("{\"expect_calls\": {");
  bool first = true;
  for (const auto& [k, v] : calls) {
    std::printf("%s\"%s\": %llu", first ? "" : ", ", k.c_str(), v);
    first = false;
  }
  std::printf("}%s%s}\n", extra.empty() ? "" : ", ", extra.c_str());
}

// The four calls of a round, resolved through cuGetProcAddress (job_limits, endings).
struct RoundCalls {
  PFN_cuLaunchKernel_v4000 launch;
  PFN_cuStreamSynchronize_v2000 sync;
  PFN_cuMemAlloc_v3020 alloc;
  PFN_cuMemFree_v3020 mfree;
};

inline RoundCalls resolve_round_calls() {
  static Resolver res(Path::procaddr);
  RoundCalls c{};
  c.launch = reinterpret_cast<PFN_cuLaunchKernel_v4000>(res.get("cuLaunchKernel", "cuLaunchKernel"));
  c.sync = reinterpret_cast<PFN_cuStreamSynchronize_v2000>(res.get("cuStreamSynchronize", "cuStreamSynchronize"));
  c.alloc = reinterpret_cast<PFN_cuMemAlloc_v3020>(res.get("cuMemAlloc", "cuMemAlloc_v2"));
  c.mfree = reinterpret_cast<PFN_cuMemFree_v3020>(res.get("cuMemFree", "cuMemFree_v2"));
  return c;
}

// One round: four hooked calls (alloc, launch, sync, free).
inline void one_round(const RoundCalls& c) {
  CUdeviceptr p = 0;
  CHECK_CU(c.alloc(&p, 4096));
  c.launch(reinterpret_cast<CUfunction>(0x1), 1, 1, 1, 1, 1, 1, 0, nullptr, nullptr, nullptr);
  CHECK_CU(c.sync(nullptr));
  CHECK_CU(c.mfree(p));
}
