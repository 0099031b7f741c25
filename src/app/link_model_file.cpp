#include "app/link_model_file.hpp"

#include <cmath>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::app {

namespace {

std::string shown_node(const YAML::Node& node) {
  if (node.IsScalar()) return io::shown(node.Scalar());
  return node.IsSequence() ? "a list" : node.IsMap() ? "a map" : "nothing";
}

// One value of a class's model, finite and at least (or above) zero.
double value(const YAML::Node& model, const std::string& path, std::string_view cls,
             const char* key, bool zero_allowed) {
  const YAML::Node v = model[key];
  if (!v.IsDefined() || v.IsNull())
    throw UsageError(fmt::format("{}: pair_classes.{}: the key '{}' is missing", path, cls, key));
  double x = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, x) || !std::isfinite(x) ||
      (zero_allowed ? x < 0 : x <= 0))
    throw UsageError(fmt::format("{}:{}: pair_classes.{}.{} must be a finite number {} 0, got {}",
                                 path, v.Mark().line + 1, cls, key, zero_allowed ? ">=" : ">",
                                 shown_node(v)));
  return x;
}

}  // namespace

LinkModels parse_link_models(std::string_view text, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw UsageError(fmt::format("{}:{}: not valid YAML: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap())
    throw UsageError(
        fmt::format("{}: not a miniamr-netbench model file (expected a map with "
                    "'model' and 'pair_classes')",
                    path));
  const YAML::Node kind = root["model"];
  if (!kind.IsDefined() || kind.IsNull())
    throw UsageError(fmt::format("{}: the key 'model' is missing", path));
  if (!kind.IsScalar() || kind.Scalar() != "alpha-beta")
    throw UsageError(
        fmt::format("{}: model {} is not supported (expected alpha-beta)", path, shown_node(kind)));
  const YAML::Node classes = root["pair_classes"];
  if (!classes.IsDefined() || classes.IsNull())
    throw UsageError(fmt::format("{}: the key 'pair_classes' is missing", path));
  if (!classes.IsMap() || classes.size() == 0)
    throw UsageError(
        fmt::format("{}: pair_classes must map same_node and/or other_node to "
                    "{{latency_s, bandwidth_Bps}}",
                    path));
  LinkModels models;
  for (const auto& kv : classes) {
    const std::string name = kv.first.IsScalar() ? kv.first.Scalar() : std::string();
    std::optional<runtime::LinkModel>* slot = name == "same_node"    ? &models.same_node
                                              : name == "other_node" ? &models.other_node
                                                                     : nullptr;
    if (!slot)
      throw UsageError(fmt::format("{}: unknown pair class {} (expected same_node or other_node)",
                                   path, shown_node(kv.first)));
    if (slot->has_value())
      throw UsageError(fmt::format("{}: pair class {} is given twice", path, name));
    if (!kv.second.IsMap())
      throw UsageError(fmt::format("{}: pair_classes.{} must be a map {{latency_s, bandwidth_Bps}}",
                                   path, name));
    runtime::LinkModel m;
    m.latency_s = value(kv.second, path, name, "latency_s", true);
    m.bandwidth_Bps = value(kv.second, path, name, "bandwidth_Bps", false);
    *slot = m;
  }
  return models;
}

}  // namespace miniamr::app
