// How much memory a rank may use, and whether a mesh fits in it. A mesh that does not fit is
// refused with the figures before the blocks are made, instead of failing in the allocator
// partway through (or taking the node down with it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <mpi.h>

#include "stencil/block.hpp"

namespace miniamr::app {

struct MemoryBudget {
  double bytes = 0;    // per rank; 0 = unknown (nothing is checked)
  std::string source;  // where the figure came from, for messages
};

// Collective over comm: the smallest budget of any rank. `max_memory` > 0 (--max_memory) is
// taken as given; otherwise each node's available memory (MemAvailable, or a smaller cgroup
// limit) is shared by the ranks on that node.
MemoryBudget memory_budget(MPI_Comm comm, double max_memory);

// Bytes one block takes: its fields plus the bookkeeping that comes with every block.
double block_bytes(const stencil::BlockShape& shape);

// The most blocks of `shape` that fit one rank's budget (the largest size_t when it is unknown).
std::size_t blocks_that_fit(const stencil::BlockShape& shape, const MemoryBudget& budget);

// "1.5 GiB", "320 KiB".
std::string human_bytes(double bytes);

// Empty when `blocks` blocks of `shape` on one rank fit the budget, else the sentence that says
// by how much they do not, starting with `what` ("the initial mesh needs").
std::string does_not_fit(double blocks, const stencil::BlockShape& shape,
                         const MemoryBudget& budget, std::string_view what);

}  // namespace miniamr::app
