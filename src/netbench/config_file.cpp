#include "netbench/config_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::netbench {

std::string read_config_text(const std::string& path) {
  const auto refuse = [&](std::string_view why) {
    return app::UsageError(
        fmt::format("cannot read config file {}: {}", io::shown(path, 200), why));
  };
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (ec) throw refuse(ec.message());
  if (fs::is_directory(st)) throw refuse("it is a directory");
  if (!fs::is_regular_file(st)) throw refuse("it is not a regular file");
  if (fs::file_size(path, ec) > kMaxConfigBytes || ec)
    throw refuse(
        fmt::format("it is larger than {} KiB, the limit for a config", kMaxConfigBytes >> 10));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw refuse(std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw refuse("a read failed");
  return text;
}

}  // namespace miniamr::netbench
