// run_folder.h: hands fuzz inputs to `cudashim report`'s readers as the files of a run folder.
//
// The readers choose by file name (cudashim-*.json: a report or a flight record;
// cudashim-*.ndjson: an event stream) and walk folders, so the input goes into files of
// one private folder that lives as long as the fuzzer (under /dev/shm when there is one:
// no disk writes), rewritten for each input and removed at exit. Then every renderer runs
// on what was read, and the contracts below hold or the fuzzer stops on the input.
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/fuzz/file_image.h"
#include "tools/html_report.h"
#include "tools/json_output.h"
#include "tools/rank_compare.h"
#include "tools/report_reader.h"

namespace cudashim::fuzz {

class RunFolder {
 public:
  RunFolder() {
    std::string tmpl = (std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp") + std::string("/fuzz-report-XXXXXX");
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    path_ = tmpl;
  }
  ~RunFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  // Writes `data` as the file `name` of the folder; returns its path.
  std::string write(const std::string& name, const std::uint8_t* data, std::size_t size) {
    const std::string p = path_ + "/" + name;
    FILE* f = std::fopen(p.c_str(), "wb");
    if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) {
      std::perror(p.c_str());
      std::abort();
    }
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Reads the folder as `cudashim report` does and renders it every way (text, ranks, --json,
// --html). Contracts: every problem names a file of the folder ("<path>/cudashim-...: what");
// a file is named at most once; a file is either read or named (`files` of them); --json is
// valid JSON (nlohmann parses it back). Returns the reports read.
inline std::vector<tools::LoadedReport> read_and_render(const RunFolder& dir, std::size_t files) {
  std::vector<std::string> problems;
  auto reports = tools::load_reports({dir.path()}, problems);
  std::vector<std::string> named;
  for (const std::string& p : problems) {
    if (p.compare(0, dir.path().size() + 1, dir.path() + "/") != 0) contract_broken("a problem naming no file: " + p);
    const std::string file = p.substr(0, p.find(": "));
    for (const std::string& n : named)
      if (n == file) contract_broken("a file named twice: " + file);
    named.push_back(file);
  }
  if (reports.size() + named.size() < files) contract_broken("a file neither read nor named");
  (void)tools::render_summary(reports, true);
  const auto ranks = tools::compare_ranks(reports);
  std::vector<std::string> html_problems;
  (void)tools::render_html(reports, html_problems);
  auto merged = tools::merge_reports(reports);
  if (!ranks.json.is_null()) merged["rank_comparison"] = ranks.json;
  const std::string text = tools::dump_utf8(merged, 2);
  if (nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false).is_discarded())
    contract_broken("--json printed invalid JSON");
  return reports;
}

}  // namespace cudashim::fuzz
