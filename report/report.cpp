// report.cpp: the report's sections, in order.
#include "report/report.h"

#include <time.h>

#include <memory>

#include "recorder/clock.h"
#include "recorder/json_writer.h"
#include "report/sections/sections.h"

namespace cudashim::report {
namespace {

struct Section {
  const char* name;                                 // the top-level member
  void (*write)(JsonWriter&, const ReportContext&);
  bool (*present)(const ReportContext&) = nullptr;  // nullptr: always
};

bool has_policy(const ReportContext& c) { return c.policy != nullptr && c.applied != nullptr; }

// The order of docs/report-schema.md (after "schema" and "cudashim_version").
constexpr Section kSections[] = {
    {"process", write_process},
    {"self_cost", write_self_cost},
    {"api", write_api},
    {"driver", write_driver},
    {"devices", write_devices},
    {"frameworks", write_frameworks},
    {"blocking", write_blocking},
    {"memory", write_memory},
    {"oom", write_oom},
    {"policy", write_policy, has_policy},
    {"findings", write_findings},
    {"leaks", write_leaks},
    {"pool", write_pool},
    {"oom_context", write_oom_context},
    {"torch_memory", write_torch_memory},
    {"libraries", write_libraries},
    {"library_findings", write_library_findings},
    {"modules", write_modules},
    {"interposition", write_interposition},
    {"gpu_time", write_gpu_time},
    {"managed_memory", write_managed_memory},
};

}  // namespace

std::string render_report(const ReportInputs& in) {
  // Per call, not static: cudashim_write_report() may run beside the exit path.
  auto totals = std::make_unique<recorder::CounterTotals>();
  recorder::sum_slots(*totals);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  const policy::LibraryInventory libraries = policy::library_inventory();
  // The rules run once per report, whatever number of sections read them.
  std::vector<Finding> evaluated;
  if (in.findings == nullptr) evaluated = policy::evaluate_findings();
  const std::vector<Finding>& findings = in.findings != nullptr ? *in.findings : evaluated;
  const uint64_t wall_ns = monotonic_ns() - in.process.start_mono_ns;
  policy::GpuTimeResult gpu;
  if (in.gpu_time == nullptr) gpu = policy::evaluate_gpu_time(findings, *totals, in.process.start_mono_ns, wall_ns);
  const std::vector<policy::ManagedPaging> managed = policy::evaluate_managed_paging(in.process.start_mono_ns,
                                                                                    in.process.start_mono_ns + wall_ns);
  const ReportContext c{in.process,
                        in.policy,
                        in.applied,
                        *totals,
                        libraries,
                        findings,
                        in.gpu_time != nullptr ? *in.gpu_time : gpu,
                        managed,
                        in.environment,
                        static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec),
                        wall_ns};
  std::string out;
  out.reserve(16384);
  JsonWriter w(out);
  {
    auto top = w.object(json_lines(2));
    w.member("schema", "cudashim.report/1");
    w.member("cudashim_version", CUDASHIM_VERSION);
    for (const Section& s : kSections) {
      if (s.present != nullptr && !s.present(c)) continue;
      w.key(s.name);
      s.write(w, c);
    }
  }
  out += '\n';
  return out;
}

}  // namespace cudashim::report
