// Reading a config file (on rank 0; the text is then broadcast).
#pragma once

#include <cstddef>
#include <string>

namespace miniamr::netbench {

// Configs are a few lines; anything larger is a wrong path (a data file, /dev/zero).
constexpr std::size_t kMaxConfigBytes = std::size_t{1} << 20;

// The text of the file at `path`. Throws app::UsageError naming the file when it is missing,
// unreadable, not a regular file (a FIFO is refused without opening it) or too large.
std::string read_config_text(const std::string& path);

}  // namespace miniamr::netbench
