// How the dynamic runtime's balancer decides who owns what: small functions from (costs along
// the curve, rank speeds, current owners) to new owners, registered in one place. Every
// strategy keeps ownership contiguous along the curve (few messages, small surfaces) and never
// splits a family that may coarsen.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/mpi.hpp"

namespace miniamr::runtime {

struct BalanceInput {
  // This rank's blocks along the ownership curve: their work per stage (in model units, the
  // same on every rank: measured seconds times the measuring rank's speed).
  std::span<const std::int64_t> weights;
  std::span<const std::size_t> family_start;  // per position: first position of its family
  double speed = 1.0;                         // this rank's model units per second
  double max_move = 1.0;  // the largest fraction of all blocks a decision may move (central)
};

// Collective. The new owner of each of this rank's positions along the curve; non-decreasing,
// and the ranks' ranges follow one another along the curve.
using Strategy = std::vector<int> (*)(const Communicator& comm, const BalanceInput& in);

// nullptr for an unknown name. Names: none, diffusion, sfc, central.
Strategy find_strategy(std::string_view name);

// The cut of a curve of `total` weight into shares proportional to `speeds`: rank r's share
// starts at the returned bounds[r] (bounds[P] = total). Identical on every rank.
std::vector<std::int64_t> speed_shares(std::int64_t total, std::span<const double> speeds);

}  // namespace miniamr::runtime
