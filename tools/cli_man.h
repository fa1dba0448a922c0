// cli_man.h: the man page cudashim(1), in roff, written from the table of tools/cli_spec.h and
// the settings table (catalog/settings.def) (`cudashim man`; installed by cmake --install).
#pragma once
#include <string>

namespace cudashim::tools {

// Returns the man page as roff (man(7) macros).
std::string man_page();

}  // namespace cudashim::tools
