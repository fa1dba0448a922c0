// report_reader.h: reading per-process reports back (files or folders) for the CLI.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace cudashim::tools {

struct LoadedReport {
  std::string path;
  nlohmann::json doc;
};

// Loads every cudashim-*.json under each of `paths` (a file or a folder).
// Unreadable or malformed files are skipped with one message each in `problems`,
// naming the file and what is wrong.
std::vector<LoadedReport> load_reports(const std::vector<std::string>& paths, std::vector<std::string>& problems);

// Returns the human summary of `reports`: one block per process, findings first.
std::string render_summary(const std::vector<LoadedReport>& reports, bool color);

// Returns the reports merged into one JSON document {"schema": "cudashim.merged/1", "processes": [...]}.
nlohmann::json merge_reports(const std::vector<LoadedReport>& reports);

}  // namespace cudashim::tools
