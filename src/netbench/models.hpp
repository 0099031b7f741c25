// From measured rows to the models of model.yaml: which rows feed which fit.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "netbench/model_file.hpp"
#include "netbench/results.hpp"

namespace miniamr::netbench {

// One model per pair class with ping-pong rows (their median one-way times), same_node first;
// LogGP where that class also has stream rows. Throws FitError naming the class when a
// ping-pong fit fails. `notes` gets a line per class whose LogGP parameters are left out.
std::vector<ClassModel> fit_models(std::span<const ResultRow> rows,
                                   std::vector<std::string>& notes);

}  // namespace miniamr::netbench
