// report_reader.h: reading per-process reports back (files or folders) for the CLI.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "tools/report_model.h"

namespace cudashim::tools {

struct LoadedReport {
  std::string path;
  nlohmann::json doc;  // as read (with the resolved native sites), or the stream summary: what --json prints
  std::variant<ProcessReport, CrashRecord, StreamSummary> what;  // what the summary, ranks and HTML render
};

// Loads every cudashim-*.json under each of `paths` (a file or a folder), and the event
// stream (cudashim-*.ndjson) of each process that left no readable report (SIGKILL, still
// running, a report cut or damaged) as a "cudashim.stream-summary/1" document: its last
// counters, findings and library loads up to the last complete line, and what was cut.
// Every file is taken as hostile (tools/input_files.h, tools/json_fields.h): one that
// cannot be read, is no regular file, is too large or too deep, is not JSON or has a field
// of the wrong type is skipped with one message in `problems` naming it and what is wrong
// (a stream damaged in the middle is read up to there, and named); the others are still
// read. Every finding id is read as today's: the old ids of reports written before the one
// findings table (catalog/findings.def, alias) become the new. The native call sites of
// the findings are resolved against the files as they are now (where_source, native_source).
std::vector<LoadedReport> load_reports(const std::vector<std::string>& paths, std::vector<std::string>& problems);

// Reads the event stream at `path`: its summary as load_reports shows it, the
// cudashim.stream-summary/1 document --json prints into `doc`, and each snapshot and exit
// line's counters into `samples`, each gpu_health line into `health` (each when given).
// Returns "" when every line was read,
// else the one problem with the file (the lines before it are in the summary); a last
// line cut short, as a process killed while writing leaves it, is no problem, only `cut`.
std::string read_stream(const std::string& path, StreamSummary& summary, nlohmann::json* doc,
                        std::vector<StreamCounters>* samples, std::vector<GpuHealthPoint>* health = nullptr);

// Returns the human summary of `reports`: one block per process, findings first (the
// job's, then its libraries'). `verbose`: every library listed even when they agree, and the
// settings taken from the environment named.
std::string render_summary(const std::vector<LoadedReport>& reports, bool color, bool verbose = false);

// Returns the reports merged into one JSON document {"schema": "cudashim.merged/1", "processes": [...]}.
nlohmann::json merge_reports(const std::vector<LoadedReport>& reports);

}  // namespace cudashim::tools
