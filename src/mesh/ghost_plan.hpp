// Which ghost faces are filled from where, derived from the leaf keys after each mesh change.
// The plan is a cache of neighbour lookups for the stages between two mesh changes; keys stay
// the only identity of a block, and messages are laid out in an order both sides derive from
// keys alone.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "mesh/domain.hpp"
#include "mesh/neighbourhood.hpp"
#include "stencil/ghost_fill.hpp"

namespace miniamr::mesh {

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

// One face crossing to another rank. `block` is the local end: the sender in a send list, the
// receiver in a receive list; `link` is always as the receiver sees it.
struct RemoteLink {
  octree::Key receiver;
  octree::Key sender;
  std::size_t block = 0;
  stencil::FaceLink link;
};

struct PeerLinks {
  int rank = 0;
  std::array<std::vector<RemoteLink>, 3> send;  // per axis of the receiver's face
  std::array<std::vector<RemoteLink>, 3> recv;
};

struct GhostPlan {
  std::array<std::vector<LocalLink>, 3> local;        // per axis, x then y then z
  std::array<std::vector<BoundaryFace>, 3> boundary;  // per axis
  std::vector<PeerLinks> peers;                       // by rank
  std::vector<char> needs_remote;  // per local block: some ghost comes from another rank
};

// In-plane octant bits of a fine block on the face of `axis` (the quarter of the coarse face).
stencil::Quadrant quadrant_of(const octree::Key& fine, int axis);

// The plan of `nb`'s local leaves.
GhostPlan build_ghost_plan(const Neighbourhood& nb);

}  // namespace miniamr::mesh
