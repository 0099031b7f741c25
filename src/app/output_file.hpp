// Files that matter (results, graphs) appear whole or not at all: written under a unique
// temporary name in the target's directory, synced, then renamed over the target.
#pragma once

#include <string>
#include <string_view>

namespace miniamr::app {

// Returns false (leaving no temporary file behind) when any step fails.
bool write_file_atomically(const std::string& path, std::string_view text);

}  // namespace miniamr::app
