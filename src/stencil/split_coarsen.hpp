// Moving field data between a block and its 8 children (spec §3.2). Values are extensive
// ("mass per cell"), so splitting divides by 8 and coarsening sums, and both keep the total.
#pragma once

#include <span>

#include "stencil/block.hpp"

namespace miniamr::stencil {

// Child `octant` (bit 0 = x, bit 1 = y, bit 2 = z) of `parent`, same shape. Child cell
// (i,j,k) = parent cell (ox*nx/2 + (i+1)/2, ...) / 8 for every variable; ghosts are 0 (the
// next exchange fills them). Needs even nx, ny, nz.
Block split_child(const Block& parent, int octant);

// Same, written over every cell of an existing block of the parent's shape (no allocation).
void split_child_into(const Block& parent, int octant, Block& child);

// Parent of 8 same-shaped children indexed by octant. Parent cell = plain sum of the 2x2x2
// child cells covering it, added x fastest, then y, then z; ghosts are 0.
Block coarsen(std::span<const Block* const, 8> children);

// Same, written over every cell of an existing block of the children's shape (no allocation).
void coarsen_into(std::span<const Block* const, 8> children, Block& parent);

}  // namespace miniamr::stencil
