#include "app/plot_files.hpp"

#include <cmath>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

namespace miniamr::app {

namespace fs = std::filesystem;

std::string plot_file_name(const Config& config, int ts) {
  int digits = 0;
  while (std::pow(10.0, digits) < double(config.num_tsteps)) ++digits;
  return fmt::format("plot.{:0{}d}", ts, digits + 1);
}

std::string in_plot_dir(const Config& config, std::string_view name) {
  if (config.plot_dir == ".") return std::string(name);
  return (fs::path(config.plot_dir) / fs::path(name)).string();
}

std::string first_plot_path(const Config& config) {
  const std::string name = plot_file_name(config, 0);
  if (config.plot_format == "xdmf") return in_plot_dir(config, name + ".h5");
  if (config.plot_format == "vtkhdf") return in_plot_dir(config, name + ".vtkhdf");
  return in_plot_dir(config, name);
}

std::string xdmf_index_path(const Config& config) {
  return in_plot_dir(config, "plot.xmf");
}

std::string plot_index_path(const Config& config) {
  if (config.plot_format == "xdmf") return xdmf_index_path(config);
  if (config.plot_format == "vtkhdf") return in_plot_dir(config, "plot.vtkhdf.series");
  return {};
}

std::string make_plot_dir(const Config& config) {
  const fs::path dir(config.plot_dir);
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return {};
  if (fs::exists(fs::symlink_status(dir, ec)))
    return fmt::format("'{}' exists and is not a folder", config.plot_dir);
  fs::create_directories(dir, ec);
  if (ec) return fmt::format("cannot create the folder '{}': {}", config.plot_dir, ec.message());
  return {};
}

}  // namespace miniamr::app
