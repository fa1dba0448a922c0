// cli_parse.cpp: the command line against tools/cli_spec.h (see cli_parse.h).
#include "tools/cli_parse.h"

#include <fmt/format.h>

#include <algorithm>

#include "policy/did_you_mean.h"
#include "policy/printable.h"

namespace cudashim::tools {

namespace {

using policy::did_you_mean;
using policy::printable;

// The commands a user can type first: each command's first word, once.
std::vector<std::string_view> first_words() {
  std::vector<std::string_view> out;
  for (const CommandSpec& c : kCommands) {
    const std::string_view w = std::string_view(c.name).substr(0, std::string_view(c.name).find(' '));
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
  }
  return out;
}

// The commands of group `group` ("policy" -> "check").
std::vector<std::string_view> group_commands(std::string_view group) {
  std::vector<std::string_view> out;
  for (const CommandSpec& c : kCommands) {
    const std::string_view n = c.name;
    if (n.size() > group.size() && n.substr(0, group.size()) == group && n[group.size()] == ' ')
      out.push_back(n.substr(group.size() + 1));
  }
  return out;
}

const OptionSpec* find_option(const CommandSpec& c, std::string_view name) {
  for (const OptionSpec& o : c.options)
    if (name == o.name) return &o;
  return nullptr;
}

std::string quoted(std::string_view s) { return "'" + printable(s, 80) + "'"; }

// Reads the options and operands of `c` from args[i...].
bool parse_command(const CommandSpec& c, const std::vector<std::string>& args, std::size_t i, ParsedArgs& out,
                   std::string& error) {
  const std::string who = fmt::format("cudashim {}", c.name);
  bool options_done = false;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.operands.push_back(a);
      if (c.operands == Operands::command) options_done = true;  // the job's words from here on
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      out.help = true;
      continue;
    }
    const std::size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const OptionSpec* o = find_option(c, name);
    if (o == nullptr) {
      std::vector<std::string_view> names;
      for (const OptionSpec& s : c.options) names.emplace_back(s.name);
      names.emplace_back(kHelpOption.name);
      error = fmt::format("{}: unknown option {}{} (`cudashim help {}` lists its options)", who, quoted(name),
                          did_you_mean(name, names), c.name);
      return false;
    }
    if (o->metavar == nullptr) {
      if (eq != std::string::npos) {
        error = fmt::format("{}: {} takes no value (it is a flag): remove {}", who, o->name, quoted(a.substr(eq)));
        return false;
      }
      out.values[o->name] = "";
      continue;
    }
    if (eq != std::string::npos) {
      out.values[o->name] = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      out.values[o->name] = args[++i];
    } else {
      error = fmt::format("{}: {} needs a value: {} {}", who, o->name, o->name, o->metavar);
      return false;
    }
  }
  if (out.help) return true;  // `cudashim run --help`: the help, whatever else is missing
  const std::size_t n = out.operands.size();
  const std::string usage = fmt::format("`cudashim {} {}`", c.name, c.operand);
  std::string what(c.operand);  // "CMD [ARGS...]" -> "CMD", "PATH..." -> "PATH"
  what = what.substr(0, what.find_first_of(" .["));
  switch (c.operands) {
    case Operands::none:
      if (n == 0) return true;
      error = fmt::format("{}: unexpected argument {}: it takes none (`cudashim help {}`)", who, quoted(out.operands[0]),
                          c.name);
      return false;
    case Operands::optional_one:
    case Operands::one:
      if (n == 1 || (n == 0 && c.operands == Operands::optional_one)) return true;
      if (n == 0)
        error = fmt::format("{}: no {} given: {}", who, what, usage);
      else
        error = fmt::format("{}: unexpected argument {}: it takes one {} ({})", who, quoted(out.operands[1]),
                            what, usage);
      return false;
    case Operands::some:
    case Operands::command:
      if (n > 0) return true;
      error = fmt::format("{}: no {} given: {}", who, what, usage);
      return false;
  }
  return true;
}

}  // namespace

bool parse_command_line(const std::vector<std::string>& args, ParsedArgs& out, std::string& error) {
  out = ParsedArgs{};
  std::size_t i = 0;
  // The program's own options come before the command.
  for (; i < args.size() && !args[i].empty() && args[i][0] == '-'; ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      out.help = true;
    } else if (a == "--version") {
      out.version = true;
    } else {
      std::vector<std::string_view> names;
      for (const OptionSpec& o : kProgramOptions) names.emplace_back(o.name);
      error = fmt::format("cudashim: unknown option {}{} (cudashim's own options are --help and --version; a "
                          "command's come after it: `cudashim help`)",
                          quoted(a), did_you_mean(a.substr(0, a.find('=')), names));
      return false;
    }
  }
  if (out.help || out.version) return true;  // the program's help or version, whatever follows
  if (i == args.size()) {
    error = "cudashim: no command given: `cudashim COMMAND ...` (`cudashim help` lists the commands)";
    return false;
  }
  std::string name = args[i++];
  if (find_group(name)) {
    const auto subs = group_commands(name);
    std::string list;
    for (std::string_view s : subs) list += (list.empty() ? "" : ", ") + std::string(s);
    if (i < args.size() && (args[i] == "--help" || args[i] == "-h")) {
      out.help = true;
      out.topic = name;
      return true;
    }
    if (i == args.size() || args[i].empty() || args[i][0] == '-') {
      error = fmt::format("cudashim {}: a command of it is needed: {} (`cudashim {} {} ...`)", name, list, name,
                          subs.front());
      return false;
    }
    const std::string sub = args[i++];
    if (find_command(name + " " + sub) == nullptr) {
      error = fmt::format("cudashim {}: {} is not one of its commands{} (it has: {})", name, quoted(sub),
                          did_you_mean(sub, subs), list);
      return false;
    }
    name += " " + sub;
  }
  out.command = find_command(name);
  if (out.command == nullptr) {
    error = fmt::format("cudashim: {} is not a cudashim command{} (`cudashim help` lists them)", quoted(name),
                        did_you_mean(name, first_words()));
    return false;
  }
  out.topic = out.command->name;
  return parse_command(*out.command, args, i, out, error);
}

}  // namespace cudashim::tools
