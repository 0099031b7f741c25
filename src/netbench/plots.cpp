#include "netbench/plots.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

extern char** environ;

namespace miniamr::netbench {

namespace {

namespace fs = std::filesystem;

// Installed, the script sits beside the executable; in a build tree, in the sources it was
// configured from.
fs::path plot_script() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path() / "miniamr-netbench-plot";
    if (fs::is_regular_file(installed, ec)) return installed;
  }
  return MINIAMR_NETBENCH_PLOT_SCRIPT;
}

}  // namespace

std::string draw_plots(const std::string& out_dir) {
  const fs::path script = plot_script();
  std::error_code ec;
  if (!fs::is_regular_file(script, ec))
    return fmt::format("the plot script '{}' is missing", script.string());
  // The interpreter CMake found (Debian's, where python3-matplotlib lives), not whichever
  // python3 comes first in PATH.
  const std::string python = MINIAMR_PLOT_PYTHON;
  const std::string csv = (fs::path(out_dir) / "results.csv").string();
  std::vector<std::string> words = {python, script.string(), csv, "--out", out_dir};
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  // posix_spawn rather than fork: no copy of an MPI process's registered memory.
  if (const int err = posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
      err != 0)
    return fmt::format("cannot start '{}': {}", python, std::strerror(err));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fmt::format("lost the plot script: {}", std::strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  if (WIFEXITED(status))
    return fmt::format("'{} {}' exited with status {}", python, script.string(),
                       WEXITSTATUS(status));
  return fmt::format("'{} {}' ended by signal {}", python, script.string(), WTERMSIG(status));
}

}  // namespace miniamr::netbench
