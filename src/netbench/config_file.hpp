// Reading a config file (on rank 0; the text is then broadcast).
#pragma once

#include <string>

namespace miniamr::netbench {

// The text of the file at `path` (app::read_input_text: a config is at most 1 MiB). Throws
// app::UsageError naming the file when it is missing, unreadable, not a regular file or too
// large.
std::string read_config_text(const std::string& path);

}  // namespace miniamr::netbench
