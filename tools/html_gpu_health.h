// html_gpu_health.h: the GPU's health over time on the `cudashim report --html` page: SM and
// memory clocks, power against its limit, temperature, device memory in use and the clock-event
// (throttle) reasons, one line per process and device, from the gpu_health lines of the event
// streams next to the reports (the shim's sampler writes one per device about once a second,
// docs/gpu-time.md). Drawn as SVG by its own script on the memory chart's time axis: a drag on
// either zooms both; hover for every value at that time.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cudashim::tools {

// One process's event stream and the name the page gives it.
struct HealthSource {
  std::string label;   // as the page names the process ("pid 12 (train.py)")
  std::string stream;  // its .ndjson path; a missing or unreadable one contributes nothing
};

// The page's part: `html` (the section), `data` (the series, under "gpu_health" in the page's
// JSON) and `script` (to run after the memory chart's).
struct GpuHealthPart {
  std::string html;
  nlohmann::json data;
  const char* script;
};

// Reads the gpu_health lines of each source's stream (the lines before any damage: the memory
// chart names the problem) and returns the section, its data and its script.
GpuHealthPart gpu_health_part(const std::vector<HealthSource>& sources);

}  // namespace cudashim::tools
