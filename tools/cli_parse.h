// cli_parse.h: the command line read against the table of tools/cli_spec.h.
//
// `cudashim [--help|--version] COMMAND [OPTIONS] [OPERANDS]`. An option is `--name VALUE`,
// `--name=VALUE` or a flag `--name`; `-h` is `--help`. Options and operands may mix, except
// for a command whose operand is a command line (`run`): its options end at the first word
// that is not one of them, and the rest is the job's, word for word. `--` ends the options of
// any command. A mistake is one line naming it, with the closest names when one is close
// (policy/did_you_mean.h), and exit status 2.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tools/cli_spec.h"

namespace cudashim::tools {

// The exit status of every usage error.
inline constexpr int kUsageExit = 2;

struct ParsedArgs {
  const CommandSpec* command = nullptr;  // nullptr: the program itself (`cudashim --version`, `cudashim --help`)
  bool help = false;                     // --help (or -h) given: show the help of `topic`
  std::string topic;                     // the command's name ("policy check"), a group's ("policy"), or "" 
  bool version = false;                  // --version given
  std::map<std::string, std::string, std::less<>> values;  // option name -> its last value ("" for a flag)
  std::vector<std::string> operands;

  bool has(std::string_view option) const { return values.find(option) != values.end(); }
  // Returns the value of `option`, or `fallback` when it was not given.
  std::string value(std::string_view option, std::string fallback = "") const {
    auto it = values.find(option);
    return it == values.end() ? fallback : it->second;
  }
};

// Parses `args` (argv without argv[0]). Returns true with `out` filled, or false with `error`
// set to the one line to print (it starts with "cudashim" and the command).
bool parse_command_line(const std::vector<std::string>& args, ParsedArgs& out, std::string& error);

}  // namespace cudashim::tools
