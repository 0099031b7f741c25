// Reading the link models that miniamr-netbench fitted (its model.yaml), so that the balancer
// can price migrations with measured latencies and bandwidths instead of a start-up ping-pong.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runtime/link_model.hpp"

namespace miniamr::app {

// One model per class of link; a class the benchmark could not measure (other_node on one node)
// is absent.
struct LinkModels {
  std::optional<runtime::LinkModel> same_node, other_node;
};

// Parses the text of a miniamr-netbench model file: `model: alpha-beta` and a map
// `pair_classes` of same_node and/or other_node, each with latency_s (finite, >= 0) and
// bandwidth_Bps (finite, > 0). Other keys (source, loggp, points, max_rel_residual) are read by
// people, not here. Throws UsageError naming `path` and the problem: YAML syntax, a missing key,
// another model kind, an unknown pair class, a value out of range or not a number, no class.
LinkModels parse_link_models(std::string_view text, const std::string& path);

}  // namespace miniamr::app
