// The command line of miniamr-netbench.
#pragma once

#include <span>
#include <string>

namespace miniamr::netbench {

struct CommandLine {
  std::string config_path;  // --config FILE
  std::string out_dir;      // --out DIR
  bool plots = true;        // --no-plots turns them off
  bool help = false, version = false;
};

// Throws app::UsageError for an unknown option, a missing value, an option given twice, or a
// missing --config or --out (unless --help or --version).
CommandLine parse_command_line(std::span<const std::string> args);

std::string help_text();

}  // namespace miniamr::netbench
