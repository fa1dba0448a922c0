// cli_completion.h: the bash and zsh completion scripts of `cudashim`, written from the table
// of tools/cli_spec.h (`cudashim completion bash|zsh`; installed by cmake --install).
#pragma once
#include <string>
#include <string_view>

namespace cudashim::tools {

// Returns the completion script for `shell` ("bash" or "zsh"), or "" for another shell.
std::string completion_script(std::string_view shell);

}  // namespace cudashim::tools
