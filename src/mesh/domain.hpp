// The part of the mesh a rank holds: its leaves in curve order and their blocks.
#pragma once

#include <vector>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "stencil/block.hpp"
#include "stencil/block_pool.hpp"

namespace miniamr::mesh {

struct Domain {
  octree::RootGrid grid;
  stencil::BlockShape shape;
  octree::LeafSet leaves;              // this rank's leaves, sorted along the Morton curve
  std::vector<stencil::Block> blocks;  // blocks[i] holds the data of leaves[i]
  std::vector<double> cost;            // measured seconds per stage of each block (moving average)
  stencil::BlockPool spare;            // storage for the next blocks made: of blocks that left,
                                       // and mapped ahead of a refinement step
};

}  // namespace miniamr::mesh
