#include "app/calibration_file.hpp"

#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::app {

namespace {

// The finite number > 0 under `key` of `map`; `where` names the map in messages.
double positive_number(const YAML::Node& map, const std::string& path, const std::string& where,
                       const char* key) {
  const YAML::Node v = map[key];
  if (!v.IsDefined() || v.IsNull())
    throw UsageError(fmt::format("{}: {}: the key '{}' is missing", path, where, key));
  double x = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x) || x <= 0)
    throw UsageError(
        fmt::format("{}:{}: {}.{} must be a finite number > 0, "
                    "got {}",
                    path, v.Mark().line + 1, where, key,
                    v.IsScalar() ? io::shown(v.Scalar()) : std::string("no number")));
  return x;
}

// One runtime's costs from a `seconds_per_update` map; `where` names it in messages.
runtime::ComputeCost costs_of(const YAML::Node& all, const std::string& path,
                              const std::string& where, const std::string& runtime) {
  const YAML::Node costs = all[runtime];
  if (!costs.IsDefined() || !costs.IsMap())
    throw UsageError(fmt::format("{}: {} has no map for the {} runtime", path, where, runtime));
  const std::string name = where + "." + runtime;
  runtime::ComputeCost c;
  c.stencil7_s = positive_number(costs, path, name, "stencil7");
  c.stencil27_s = positive_number(costs, path, name, "stencil27");
  c.variable_s = positive_number(costs, path, name, "variable");
  return c;
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
  runtime::ComputeModel model;
  model.points.push_back(costs_of(all, path, "seconds_per_update", runtime));
  const YAML::Node sets = root["working_sets"];
  if (!sets.IsDefined() || sets.IsNull()) return model;
  if (!sets.IsSequence() || sets.size() == 0)
    throw UsageError(
        fmt::format("{}: working_sets must be a list of {{bytes, "
                    "seconds_per_update}} maps, smallest first",
                    path));
  model.points.clear();
  for (std::size_t i = 0; i < sets.size(); ++i) {
    const YAML::Node set = sets[i];
    const std::string where = fmt::format("working_sets[{}]", i);
    if (!set.IsMap() || !set["bytes"].IsDefined())
      throw UsageError(fmt::format("{}: {}.bytes must be a finite number > 0", path, where));
    const double b = positive_number(set, path, where, "bytes");
    if (!model.points.empty() && b <= model.points.back().working_set_bytes)
      throw UsageError(
          fmt::format("{}: {}.bytes must be larger than the one before it", path, where));
    const YAML::Node costs = set["seconds_per_update"];
    if (!costs.IsDefined() || !costs.IsMap())
      throw UsageError(fmt::format("{}: {} has no seconds_per_update map", path, where));
    runtime::ComputeCost c = costs_of(costs, path, where + ".seconds_per_update", runtime);
    c.working_set_bytes = b;
    model.points.push_back(c);
  }
  return model;
}

}  // namespace miniamr::app
