// Per-rank counts summed along the rank order and over all ranks, with their extremes, in one
// collective of point-to-point messages: what an exclusive scan, a sum and a min/max reduction
// give together, without an array of one entry per rank (an allgather's) on any rank.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/mpi.hpp"

namespace miniamr::comm {

// For each value i of the ranks' vectors (the same length on every rank): the sum over the
// ranks before this one (0 on rank 0), and the sum, least and greatest over all ranks.
struct Tally {
  std::vector<std::int64_t> before, total, min, max;
};

// Collective over `comm`. A recursive-doubling scan over the largest power of two of ranks, the
// ranks beyond it folded into their curve neighbours first (rank 2i into 2i + 1, so that the
// folded ranks stay in order): ceil(log2 P) + 2 rounds of messages of 3 n values, where an
// allgather moves P values to every rank and SMPI's MPI_Exscan sends P^2 / 2 messages.
Tally tally(const Communicator& comm, std::span<const std::int64_t> mine);

}  // namespace miniamr::comm
