// Which ghost faces are filled from where, derived from the leaf keys after each mesh change.
// The plan is a cache of neighbour lookups for the stages between two mesh changes; the keys
// stay the only identity of a block.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "runtime/domain.hpp"
#include "stencil/ghost_fill.hpp"

namespace miniamr::runtime {

// Receiver `dst` fills its ghost face link.face from sender `src`, both on this rank.
struct LocalLink {
  std::size_t dst = 0;
  std::size_t src = 0;
  stencil::FaceLink link;
};

struct BoundaryFace {
  std::size_t block = 0;
  int face = 0;
};

// A face whose sender lives on another rank (or whose receiver does, seen from the sender).
struct RemoteFace {
  octree::Key local;   // the block on this rank
  octree::Key remote;  // the same-level region across the face (the other rank finds its leaves)
  std::size_t block = 0;
  int face = 0;  // face of `local`
};

struct GhostPlan {
  std::array<std::vector<LocalLink>, 3> local;        // per axis, x then y then z
  std::array<std::vector<BoundaryFace>, 3> boundary;  // per axis
  std::array<std::vector<RemoteFace>, 3> remote;      // faces not fully served on this rank
};

// In-plane octant bits of a fine block on the face of `axis` (the quarter of the coarse face).
stencil::Quadrant quadrant_of(const octree::Key& fine, int axis);

GhostPlan build_ghost_plan(const Domain& domain);

}  // namespace miniamr::runtime
