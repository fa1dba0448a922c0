// cli_spec.h: THE table of the command line: every command, its operands and its options,
// and the exit statuses. The parser (tools/cli_parse.h), `--help` and `cudashim help CMD`
// (tools/cli_help.h), the bash and zsh completions (tools/cli_completion.h), the man page
// (tools/cli_man.h) and docs/cli.md are all generated from these rows: an option added here
// is parsed, documented and completed; an option that is not here does not exist.
#pragma once
#include <span>
#include <string_view>

namespace cudashim::tools {

// What a value or an operand is, for the completions: a file, a folder, one of `words`, a
// command line (the rest of the words), one of cudashim's own commands, or anything.
enum class ValueKind : unsigned char { text, file, dir, word, command, topic };

struct OptionSpec {
  const char* name;     // "--out"
  const char* metavar;  // "DIR"; nullptr: a flag, which takes no value
  ValueKind kind;       // what its value is
  const char* help;     // one line
  const char* words = "";  // ValueKind::word: the values, separated by blanks
};

// How many operands a command takes. `command`: a command line, whose first word ends the
// command's own options (as `nsys profile`, `heaptrack` and `docker run` do): everything from
// there on, "-c" and "--help" included, is the job's.
enum class Operands : unsigned char { none, one, optional_one, some, command };

struct CommandSpec {
  const char* name;      // "run", or "policy check" (a command of a group)
  const char* operand;   // "CMD [ARGS...]", "PATH...", "FILE"; "" when it takes none
  Operands operands;
  ValueKind operand_kind;
  const char* summary;   // one line, for the list of commands
  const char* details;   // paragraphs for `help CMD` and the man page ('\n' between them); may be ""
  std::span<const OptionSpec> options;
  const char* operand_words = "";  // ValueKind::word: the operand's values
};

// --- the options of each command ---------------------------------------------------------

inline constexpr OptionSpec kRunOptions[] = {
    {"--out", "DIR", ValueKind::dir, "folder for the reports (default: ./cudashim-runs/<time>-<pid>)"},
    {"--shim", "PATH", ValueKind::file, "path of libcudashim.so (default: $CUDASHIM_LIB, else found next to this program)"},
    {"--quiet", nullptr, ValueKind::text, "print no summary at the end"},
    {"--verbose", nullptr, ValueKind::text,
     "the whole summary: every CUDA library (one line when they agree), where each setting came from, the info "
     "findings, the sites of what is live at exit, the top 5 blocked APIs (3 without it), a policy of defaults"},
};
inline constexpr OptionSpec kReportOptions[] = {
    {"--json", nullptr, ValueKind::text, "print the reports merged as one JSON document"},
    {"--html", "FILE", ValueKind::file, "also write one self-contained HTML page with plots to FILE"},
    {"--verbose", nullptr, ValueKind::text,
     "the whole summary: every CUDA library (one line when they agree), where each setting came from, the info "
     "findings, the sites of what is live at exit, the top 5 blocked APIs (3 without it), a policy of defaults"},
};
inline constexpr OptionSpec kDoctorOptions[] = {
    {"--json", nullptr, ValueKind::text, "print the findings and libraries as JSON (fields: docs/doctor-schema.md)"},
    {"--sm", "ARCH", ValueKind::text,
     "GPU compute capability to check fatbins for: 90, 9.0 or sm_90 (default: nvidia-smi, else 90)"},
    {"--driver-version-file", "FILE", ValueKind::file,
     "the kernel module's version file to check the driver bridge against (default /proc/driver/nvidia/version)"},
    {"--mountinfo", "FILE", ValueKind::file, "mount table telling host bind-mounts (default /proc/self/mountinfo)"},
    {"--jobs", "N", ValueKind::text, "files examined at once (default: one per core, at most 16)"},
    {"--verbose", nullptr, ValueKind::text, "also show the notes inside NVIDIA's and the frameworks' own files"},
    {"--driver-version", "VERSION", ValueKind::text,
     "the driver release to check the framework against, e.g. 535.104.05 (default: the kernel module's)"},
};
inline constexpr OptionSpec kHooksOptions[] = {
    {"--names", nullptr, ValueKind::text, "names only, one per line"},
    {"--markdown", nullptr, ValueKind::text, "a Markdown table (docs/hooks.md)"},
};
inline constexpr OptionSpec kOptionsOptions[] = {
    {"--markdown", nullptr, ValueKind::text, "Markdown tables (docs/options.md)"},
};
inline constexpr OptionSpec kFindingsOptions[] = {
    {"--markdown", nullptr, ValueKind::text, "a Markdown table (docs/findings.md)"},
};
inline constexpr OptionSpec kExporterOptions[] = {
    {"--dir", "DIR", ValueKind::dir,
     "the runtime folder of the fleet records (default: fleet.dir's auto: $XDG_RUNTIME_DIR/cudashim, else /run/cudashim)"},
    {"--listen", "ADDR", ValueKind::text, "the IPv4 address to serve on (default 0.0.0.0; 127.0.0.1: this node only)"},
    {"--port", "PORT", ValueKind::text, "the TCP port of /metrics (default 9401, beside dcgm-exporter's 9400; 0: any free one)"},
    {"--textfile", "DIR", ValueKind::dir,
     "node_exporter's textfile-collector folder: DIR/cudashim.prom holds the last values of the finished jobs"},
    {"--keep-exited", "SECONDS", ValueKind::text,
     "serve a finished process's last record this long, then reap it (default 60)"},
    {"--once", nullptr, ValueKind::text, "print the exposition once on stdout and exit (promtool check metrics reads it)"},
    {"--nvidia-gpus", "DIR", ValueKind::dir,
     "the driver's per-GPU folders, for NVML's index and UUID of each bus id (default /proc/driver/nvidia/gpus)"},
};
inline constexpr OptionSpec kHelpOptions[] = {
    {"--markdown", nullptr, ValueKind::text, "every command as Markdown (docs/cli.md)"},
};

// The options every command takes, and the program's own.
inline constexpr OptionSpec kHelpOption = {"--help", nullptr, ValueKind::text, "show this command's help and exit"};
inline constexpr OptionSpec kProgramOptions[] = {
    {"--help", nullptr, ValueKind::text, "show the commands and exit (also -h)"},
    {"--version", nullptr, ValueKind::text, "show the version, the build's commit and the CUDA headers it was built against"},
};

// --- the commands, in the order `cudashim --help` lists them --------------------------------

inline constexpr CommandSpec kCommands[] = {
    {"run", "CMD [ARGS...]", Operands::command, ValueKind::command,
     "run a command with the shim preloaded and summarize every process",
     "Puts libcudashim.so first in LD_PRELOAD (the job's own entries stay), sets CUDASHIM_OUT, runs CMD, prints a "
     "summary of every process that made a CUDA call (those that made none counted in one line), and exits with CMD's "
     "own exit status (128+N when a signal N "
     "ended it; as a shell: 127 when CMD is not found, 126 when it is a folder or not executable).\n"
     "cudashim's options come before CMD: the first word that is not one of them is CMD, and every word after it is "
     "CMD's (`cudashim run python3 -c 'print(1)'`, `cudashim run ./app --help`). A `--` before CMD is allowed.",
     kRunOptions},
    {"report", "PATH...", Operands::some, ValueKind::file,
     "summarize report files or run folders",
     "Reads cudashim reports (files, or folders searched for them): flight records first, then each process, then "
     "the ranks side by side. Every file is read as hostile: one that cannot be read is named on one line of stderr "
     "and the rest is still summarized.\n"
     "Exit status: 0 when every input was read; 3 when some could not be (or the --html page cannot be written); 1 "
     "when no report was found.",
     kReportOptions},
    {"doctor", "PATH...", Operands::some, ValueKind::file,
     "check binaries, libraries, folders or a Python environment offline (no GPU needed)",
     "Which file the loader picks for each CUDA library and why, versioned-symbol shortfalls, fatbin coverage for "
     "the GPU, duplicate copies and mixed majors, the kernel module against the libcuda a container would load, and "
     "Triton's toolchain.",
     kDoctorOptions},
    {"policy check", "FILE", Operands::one, ValueKind::file,
     "validate a policy file and print the effective policy",
     "Prints the effective policy (defaults, /etc/cudashim/policy.toml unless FILE is it, FILE, then the CUDASHIM_* "
     "environment) with where each value came from, and every error.\n"
     "Exit status: 0 when the policy is valid; 78 when it is not (the status a process would stop with).",
     {}},
    {"exporter", "", Operands::none, ValueKind::text,
     "serve the node's live per-process records to Prometheus (/metrics)",
     "Reads the fleet records the preload library writes in the node's runtime folder (fleet.dir, docs/fleet.md) "
     "and serves them over HTTP in Prometheus's text format: one series per process and GPU, with dcgm-exporter's "
     "labels (gpu, UUID, pod, namespace, container) and the job's (slurm_job_id, slurm_step, rank). A bad file in "
     "the folder (cut, hostile, of a newer version, a link, of another user) is named once on stderr and skipped. "
     "Records of ended processes are served --keep-exited seconds, then removed (and written to --textfile). Runs "
     "until SIGTERM or SIGINT; needs no root when the folder is the user's.\n"
     "Exit status: 0 after SIGTERM or SIGINT (or --once); 2 a bad option value; 3 when the folder or the port "
     "cannot be used.",
     kExporterOptions},
    {"hooks", "", Operands::none, ValueKind::text, "list every interposed ABI symbol and what is recorded for it", "",
     kHooksOptions},
    {"options", "", Operands::none, ValueKind::text,
     "list every setting: CUDASHIM_* variable, policy file key, default", "", kOptionsOptions},
    {"findings", "", Operands::none, ValueKind::text, "list every finding id with its severity and fix", "",
     kFindingsOptions},
    {"help", "[COMMAND]", Operands::optional_one, ValueKind::topic, "show the commands, or one command's options", "",
     kHelpOptions},
    {"completion", "SHELL", Operands::one, ValueKind::word,
     "print the shell completion script for bash or zsh",
     "bash: `source <(cudashim completion bash)`, or install it as "
     "share/bash-completion/completions/cudashim (cmake --install does). zsh: install it as _cudashim in a folder of "
     "$fpath (cmake --install puts it in share/zsh/site-functions).",
     {}, "bash zsh"},
    {"man", "", Operands::none, ValueKind::text, "print the man page (roff) of cudashim(1)",
     "`cudashim man | man -l -` shows it; cmake --install puts it in share/man/man1/cudashim.1.", {}},
};

// The groups of commands: a group's name followed by one of its commands ("policy check").
struct CommandGroup {
  const char* name;
  const char* summary;
};
inline constexpr CommandGroup kCommandGroups[] = {{"policy", "policy files: check one"}};

// Returns the group named `name`, or nullptr.
constexpr const CommandGroup* find_group(std::string_view name) {
  for (const CommandGroup& g : kCommandGroups)
    if (name == g.name) return &g;
  return nullptr;
}

// --- exit statuses, in one place --------------------------------------------------------------

struct ExitStatus {
  const char* code;
  const char* meaning;
};
inline constexpr ExitStatus kExitStatuses[] = {
    {"0", "success: the command did what was asked and found nothing to report"},
    {"1", "findings: `doctor` found warnings; `report` found no report at all"},
    {"2", "usage: an unknown command or option, a missing or extra operand (one line on stderr, with a "
          "suggestion when a name is close)"},
    {"3", "bad inputs: a file or folder that cannot be read or written (each named on stderr; `report` still "
          "summarizes the rest), a value that does not parse (`doctor --sm`)"},
    {"4", "errors: `doctor` found errors (a library the loader cannot find, a driver too old for the framework, ...)"},
    {"78", "`policy check`: the policy is invalid (the status a process would stop with at its first CUDA call)"},
    {"CMD's", "`run`: the job's own exit status (128+N when signal N ended it; 127 CMD not found, 126 CMD not executable)"},
};

// Returns the command named `name` ("run", "policy check"), or nullptr.
constexpr const CommandSpec* find_command(std::string_view name) {
  for (const CommandSpec& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

}  // namespace cudashim::tools
