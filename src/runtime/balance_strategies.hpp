// How the dynamic runtime's balancer cuts the curve: each strategy is a pure function from every
// rank's work along the curve (in model units) and its relative speed to the new boundaries of
// the ranks' ranges in work space. Ranges stay contiguous and in rank order (few messages, small
// surfaces); which blocks fall in a range each rank works out alone (balance.hpp: owners).
// Nothing here needs more than the P per-rank numbers, so no rank ever sees every block's cost.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace miniamr::runtime::balance {

enum class Strategy {
  kNone,        // the current cut: nothing moves
  kSfc,         // shares of the whole curve proportional to the speeds
  kDiffusion,   // each pair of curve neighbours equalises its two times
  kCentral,     // the sfc cut, each boundary moved only part of the way (max_move)
  kPredictive,  // the sfc cut of the forecast weights (the caller forecasts)
};

// nullopt for an unknown name. Names: none, sfc, diffusion, central, predictive.
std::optional<Strategy> strategy_named(std::string_view name);

// The boundaries of the current ranges: bounds[r] = work of ranks 0..r-1 (P + 1 values).
std::vector<std::int64_t> current_bounds(std::span<const std::int64_t> work);

// The work that changes rank between the cuts `from` and `to` (both P + 1 boundaries).
std::int64_t moved_work(std::span<const std::int64_t> from, std::span<const std::int64_t> to);

// The new boundaries of `strategy` for ranks holding `work` (in curve order) with relative
// speeds `speeds` (> 0). `max_move`: the largest fraction of all work that `central` moves.
// Non-decreasing, from 0 to the total work.
std::vector<std::int64_t> strategy_bounds(Strategy strategy, std::span<const std::int64_t> work,
                                          std::span<const double> speeds, double max_move);

}  // namespace miniamr::runtime::balance
