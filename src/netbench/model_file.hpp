// model.yaml: the fitted models, in the shape miniamr's --lb_link_model reads
// (app/link_model_file.hpp).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "netbench/fit.hpp"
#include "netbench/topology.hpp"

namespace miniamr::netbench {

struct ClassModel {
  PairClass pair_class = PairClass::kSameNode;
  AlphaBeta alpha_beta;
  std::optional<LogGP> loggp;
};

struct ModelSource {
  std::string config;  // the config file as given on the command line
  int ranks = 1, nodes = 1;
  std::string date;  // UTC, ISO 8601
};

// The text of model.yaml. `classes` holds at least one entry (a pair class measured).
std::string model_yaml(std::string_view version, const ModelSource& source,
                       std::span<const ClassModel> classes);

// The current time as UTC ISO 8601 ("2024-05-01T12:00:00Z").
std::string utc_now();

}  // namespace miniamr::netbench
