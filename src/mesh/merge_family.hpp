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

// The parent of `children` (in octant order): storage from `pool`, cells coarsened from the
// children, cost the mean of theirs (each eighth added in octant order). The children's storage
// goes back to `pool`.
MergedFamily merge_family(std::span<stencil::Block, 8> children, std::span<const double, 8> costs,
                          stencil::BlockPool& pool);

}  // namespace miniamr::mesh
