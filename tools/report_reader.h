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

// Loads every cudashim-*.json under each of `paths` (a file or a folder), and the event
// stream (cudashim-*.ndjson) of each process that left no report (SIGKILL, still
// running) as a "cudashim.stream-summary/1" document: its last counters, findings and
// library loads up to the last complete line, and what was cut. Unreadable or
// malformed files are skipped with one message each in `problems`, naming the file
// and what is wrong. Every finding id is read as today's: the old ids of reports
// written before the one findings table (catalog/findings.def, alias) become the new.
std::vector<LoadedReport> load_reports(const std::vector<std::string>& paths, std::vector<std::string>& problems);

// Resolves the native call sites of every finding (findings[].sites[].where_frame and
// frames[], recorded by the shim as file + link-time address + build-id) against the
// files as they are now: adds where_source {status, text, function, file, line, column,
// debug_file} and native_source (one text per frame). A file that is gone or changed
// since the run gets status missing/changed and no line. load_reports calls it.
void resolve_native_sites(nlohmann::json& doc);

// The text of a call site for people: the resolved source line when there is one,
// else the recorded `where`.
std::string site_where(const nlohmann::json& site);

// Returns the human summary of `reports`: one block per process, findings first (the
// job's, then its libraries').
std::string render_summary(const std::vector<LoadedReport>& reports, bool color);

// Returns the reports merged into one JSON document {"schema": "cudashim.merged/1", "processes": [...]}.
nlohmann::json merge_reports(const std::vector<LoadedReport>& reports);

}  // namespace cudashim::tools
