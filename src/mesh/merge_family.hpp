// Merging a family of eight leaves into their parent: the one way it is done, whether at the
// adaptation or on the rank a family leaves, so that both make the same bits and the same cost.
#pragma once

#include <span>

#include "stencil/block.hpp"
#include "stencil/block_pool.hpp"

namespace miniamr::mesh {

struct MergedFamily {
  stencil::Block block;
  double cost = 0.0;
};

// The parent's cost: the mean of the children's, each eighth added in octant order.
double merged_cost(std::span<const double, 8> costs);

// Coarsens `children` (in octant order) into `parent`, storage of their shape whose values
// are indeterminate, and gives the children's storage back to `pool`.
void merge_into(std::span<stencil::Block, 8> children, stencil::Block& parent,
                stencil::BlockPool& pool);

// The parent of `children` (in octant order): storage from `pool`, cells coarsened from the
// children (merge_into), cost merged_cost of theirs.
MergedFamily merge_family(std::span<stencil::Block, 8> children, std::span<const double, 8> costs,
                          stencil::BlockPool& pool);

}  // namespace miniamr::mesh
