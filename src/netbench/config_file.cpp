#include "netbench/config_file.hpp"

#include "app/input_file.hpp"

namespace miniamr::netbench {

std::string read_config_text(const std::string& path) {
  return app::read_input_text(path, "config");
}

}  // namespace miniamr::netbench
