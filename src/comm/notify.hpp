// Who will send to me? p4est's sc_notify: each rank names the ranks it will send a message to
// and the message's size; each learns who will send to it, and how much. The (receiver, sender,
// size) notices are routed over a hypercube, each round sending a rank's notices for the other
// half to its partner there, so that a rank handles only the notices that pass through it: no
// array of one entry per rank (an all-to-all's or a reduce-scatter's) and no probe (a polling
// loop, in SMPI an event of the simulation at every failed poll).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "comm/mpi.hpp"

namespace miniamr::comm {

// One message of `bytes` bytes to or from `rank`.
struct Notice {
  int rank = 0;
  int bytes = 0;
};

// The most values a notify (and so a sparse exchange) carries to their least over the ranks.
inline constexpr std::size_t kMaxLeast = 2;
// Throws std::invalid_argument when `least` holds more than kMaxLeast values.
void check_least(std::span<const int> least);

// Collective over `comm`. `sends`: the messages this rank will send (to other ranks; a rank
// named twice gets two). Returns the messages it will receive, by sender's rank. ceil(log2 P) + 2
// rounds (the ranks beyond the largest power of two folded into their neighbours, as in tally()),
// each one message each way, two when more notices travel than the first message holds.
// `least` (at most kMaxLeast values, the same count on every rank) rides on the same messages:
// on return each value is its least over the ranks, as an MPI_MIN reduction would leave it, so a
// vote that every rank needs (did any fail, does any move) costs no collective of its own.
std::vector<Notice> notify(const Communicator& comm, std::span<const Notice> sends,
                           std::span<int> least = {});

}  // namespace miniamr::comm
