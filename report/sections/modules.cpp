// modules.cpp: the report's "modules" section: device code the process loaded
// (recorder/library_log.h): totals, per calling module, and the slowest loads in detail.
#include <strings.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "recorder/library_log.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

// Whether the driver loads kernels lazily: CUDA_MODULE_LOADING as the process has it
// (lazy is the default since CUDA 12.2 on Linux).
void write_lazy_loading(JsonWriter& w, const std::string& value) {
  auto o = w.object();
  w.member("on", strcasecmp(value.c_str(), "EAGER") != 0);
  w.member("CUDA_MODULE_LOADING", value);
}

}  // namespace

void write_modules(JsonWriter& w, const ReportContext& c) {
  uint64_t dropped = 0;
  const std::vector<recorder::ModuleLoad> loads = recorder::module_loads(&dropped);
  const recorder::ModuleTotals t = recorder::module_totals();
  struct By {
    uint64_t count = 0, ns = 0, bytes = 0, jit = 0;
  };
  uint64_t triton_count = 0, triton_ns = 0;
  std::map<std::string, By> by;
  for (const auto& m : loads) {
    By& b = by[m.caller];
    b.count++, b.ns += m.dt_ns, b.bytes += m.bytes, b.jit += m.ptx_jit_bytes;
    if (m.origin == "triton") triton_count++, triton_ns += m.dt_ns;
  }
  auto o = w.object();
  w.member("count", t.count);
  w.member("time_ns", t.ns);
  w.member("bytes", t.bytes);
  w.member("sass_bytes", t.sass_bytes);
  w.member("sass_bytes_for_device", t.sass_bytes_for_sm);
  w.member("ptx_jit_bytes", t.ptx_jit_bytes);
  w.member("failed", t.failed);
  w.member("not_kept", dropped);
  w.key("lazy_loading");
  write_lazy_loading(w, c.environment.cuda_module_loading);
  w.key("triton");
  {
    auto tr = w.object();
    w.member("count", triton_count);
    w.member("time_ns", triton_ns);
  }
  w.key("by_caller");
  {
    auto a = w.array(json_lines(4));
    for (const auto& [caller, b] : by) {
      auto row = w.object();
      w.member("module", caller);
      w.member("count", b.count);
      w.member("time_ns", b.ns);
      w.member("bytes", b.bytes);
      w.member("ptx_jit_bytes", b.jit);
    }
  }
  std::vector<const recorder::ModuleLoad*> slow;
  for (const auto& m : loads) slow.push_back(&m);
  std::sort(slow.begin(), slow.end(), [](auto* a, auto* b) { return a->dt_ns > b->dt_ns; });
  w.key("slowest");
  auto a = w.array(json_lines(4));
  for (size_t i = 0; i < slow.size() && i < 10; ++i) {
    const recorder::ModuleLoad& m = *slow[i];
    auto row = w.object();
    w.member("api", m.api == HookId::kCount ? "" : hook_info(m.api).name);
    w.member("caller", m.caller);
    w.member("owner", m.owner);
    w.member("origin", m.origin);
    w.member("kind", m.kind);
    w.member("path", m.path);
    w.member("bytes", m.bytes);
    w.member("coverage", m.coverage);
    w.member("sm", m.sm);
    w.member("archs", m.archs);
    w.member("sass_bytes_for_device", m.sass_bytes_for_sm);
    w.member("ptx_jit_bytes", m.ptx_jit_bytes);
    w.member("time_ns", m.dt_ns);
    w.member("result", m.result);
  }
}

}  // namespace cudashim::report
