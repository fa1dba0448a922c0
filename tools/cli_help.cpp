// cli_help.cpp: the help texts, the version line and docs/cli.md (see cli_help.h).
#include "tools/cli_help.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cudashim_build_info.h"  // generated at build time by tools/build_info.cmake
#include "tools/cli_spec.h"

namespace cudashim::tools {

namespace {

constexpr const char* kTagline = "see what a CUDA/PyTorch job really does, without editing it";

// "--out DIR" or "--quiet".
std::string option_label(const OptionSpec& o) {
  return o.metavar ? fmt::format("{} {}", o.name, o.metavar) : std::string(o.name);
}

std::string usage_line(const CommandSpec& c) {
  std::string u = fmt::format("cudashim {}", c.name);
  if (!c.options.empty()) u += " [OPTIONS]";
  if (c.operands == Operands::command) u += " [--]";
  if (*c.operand) u += fmt::format(" {}", c.operand);
  return u;
}

// Options as an aligned two-column list.
std::string option_list(std::span<const OptionSpec> options, bool with_help_option) {
  std::size_t width = 0;
  for (const OptionSpec& o : options) width = std::max(width, option_label(o).size());
  if (with_help_option) width = std::max(width, std::string_view("--help, -h").size());
  std::string out;
  for (const OptionSpec& o : options) out += fmt::format("  {:<{}}  {}\n", option_label(o), width, o.help);
  if (with_help_option) out += fmt::format("  {:<{}}  {}\n", "--help, -h", width, kHelpOption.help);
  return out;
}

std::string command_help(const CommandSpec& c) {
  std::string out = fmt::format("usage: {}\n\n{}\n", usage_line(c), c.summary);
  for (std::string_view d = c.details; !d.empty();) {
    const std::size_t nl = d.find('\n');
    out += fmt::format("\n{}\n", d.substr(0, nl));
    d = nl == std::string_view::npos ? std::string_view() : d.substr(nl + 1);
  }
  out += "\noptions:\n" + option_list(c.options, true);
  return out;
}

std::string exit_status_list() {
  std::string out;
  for (const ExitStatus& e : kExitStatuses) out += fmt::format("  {:<6} {}\n", e.code, e.meaning);
  return out;
}

bool in_group(const CommandSpec& c, std::string_view group) {
  const std::string_view n = c.name;
  return n.size() > group.size() && n.substr(0, group.size()) == group && n[group.size()] == ' ';
}

}  // namespace

std::string version_text() {
  const int v = CUDASHIM_BUILD_CUDA_VERSION;
  return fmt::format("cudashim {} (commit {}; built against CUDA {}.{} headers, CUDA_VERSION {})\n", CUDASHIM_VERSION,
                     CUDASHIM_BUILD_COMMIT, v / 1000, v % 1000 / 10, v);
}

bool is_help_topic(std::string_view topic) { return topic.empty() || find_group(topic) || find_command(topic) != nullptr; }

std::string help_text(std::string_view topic) {
  if (const CommandSpec* c = find_command(topic)) return command_help(*c);
  if (find_group(topic)) {
    std::string out;
    for (const CommandSpec& c : kCommands)
      if (in_group(c, topic)) out += (out.empty() ? "" : "\n") + command_help(c);
    return out;
  }
  if (!topic.empty()) return "";
  std::size_t width = 0;
  for (const CommandSpec& c : kCommands) width = std::max(width, std::string_view(c.name).size());
  std::string out = fmt::format("cudashim {}: {}\n\nusage: cudashim COMMAND [OPTIONS] [ARGS...]\n\ncommands:\n",
                                CUDASHIM_VERSION, kTagline);
  for (const CommandSpec& c : kCommands) out += fmt::format("  {:<{}}  {}\n", c.name, width, c.summary);
  out += "\noptions:\n" + option_list(kProgramOptions, false);
  out += "\nexit status:\n" + exit_status_list();
  out += "\n`cudashim help COMMAND` (or `cudashim COMMAND --help`) shows a command's options.\n";
  return out;
}

std::string cli_markdown() {
  std::string out = "## Commands\n\n| Command | What it does |\n|---|---|\n";
  for (const CommandSpec& c : kCommands) out += fmt::format("| `{}` | {} |\n", usage_line(c), c.summary);
  out += "\n## Exit status\n\nOne table for every command (`cudashim --help` prints it too):\n\n"
         "| Status | Meaning |\n|---|---|\n";
  for (const ExitStatus& e : kExitStatuses) out += fmt::format("| {} | {} |\n", e.code, e.meaning);
  for (const CommandSpec& c : kCommands) {
    out += fmt::format("\n## `cudashim {}`\n\n`{}`\n\n{}.\n", c.name, usage_line(c), c.summary);
    for (std::string_view d = c.details; !d.empty();) {
      const std::size_t nl = d.find('\n');
      out += fmt::format("\n{}\n", d.substr(0, nl));
      d = nl == std::string_view::npos ? std::string_view() : d.substr(nl + 1);
    }
    out += "\n| Option | Meaning |\n|---|---|\n";
    for (const OptionSpec& o : c.options) out += fmt::format("| `{}` | {} |\n", option_label(o), o.help);
    out += fmt::format("| `--help`, `-h` | {} |\n", kHelpOption.help);
  }
  return out;
}

}  // namespace cudashim::tools
