#include "app/calibration_file.hpp"

#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::app {

namespace {

double seconds(const YAML::Node& costs, const std::string& path, const std::string& runtime,
               const char* key) {
  const YAML::Node v = costs[key];
  if (!v.IsDefined() || v.IsNull())
    throw UsageError(
        fmt::format("{}: seconds_per_update.{}: the key '{}' is missing", path, runtime, key));
  double x = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x) || x <= 0)
    throw UsageError(
        fmt::format("{}:{}: seconds_per_update.{}.{} must be a finite number > 0, "
                    "got {}",
                    path, v.Mark().line + 1, runtime, key,
                    v.IsScalar() ? io::shown(v.Scalar()) : std::string("no number")));
  return x;
}

}  // namespace

runtime::ComputeModel parse_calibration(std::string_view text, const std::string& path,
                                        const std::string& runtime) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  const YAML::Node all = root.IsMap() ? root["seconds_per_update"] : YAML::Node();
  if (!all.IsDefined() || !all.IsMap())
    throw UsageError(
        fmt::format("{}: not a miniamr compute calibration (expected a map with "
                    "'seconds_per_update': {{static: {{stencil7, stencil27, variable}}, dynamic: "
                    "...}}; tools/calibrate_compute.py writes one)",
                    path));
  const YAML::Node costs = all[runtime];
  if (!costs.IsDefined() || !costs.IsMap())
    throw UsageError(
        fmt::format("{}: seconds_per_update has no map for the {} runtime", path, runtime));
  runtime::ComputeModel model;
  model.stencil7_s = seconds(costs, path, runtime, "stencil7");
  model.stencil27_s = seconds(costs, path, runtime, "stencil27");
  model.variable_s = seconds(costs, path, runtime, "variable");
  return model;
}

}  // namespace miniamr::app
