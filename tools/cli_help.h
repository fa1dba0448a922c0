// cli_help.h: the help texts, the version line and docs/cli.md, written from the table of
// tools/cli_spec.h.
#pragma once
#include <string>
#include <string_view>

namespace cudashim::tools {

// Returns the help of `topic`: "" for the program (its commands, its options, the exit
// statuses), a command ("run", "policy check") or a group ("policy": each of its commands).
// Returns "" when `topic` names none of them.
std::string help_text(std::string_view topic);

// The known topics of `cudashim help TOPIC`: every command and group.
bool is_help_topic(std::string_view topic);

// `cudashim --version`: "cudashim 0.1.0 (commit v0.1.0-12-gabc1234, CUDA headers 12.9 (12090))".
// The commit is `git describe` of the source tree when the CLI was built ("unknown" outside a
// git tree); the CUDA version is CUDA_VERSION of the cuda.h the build used.
std::string version_text();

// Every command, its options and the exit statuses, as the Markdown of docs/cli.md.
std::string cli_markdown();

}  // namespace cudashim::tools
