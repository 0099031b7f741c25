// Octree algorithms the benchmarks need that src/octree does not have yet: refinement around a
// sphere surface and 2:1 face balance of a complete linear octree. They live in bench/ for now
// (src/octree has another owner); both work on ONE root block (RootGrid 1x1x1, the unit cube),
// where a Morton code of the lower corner fits in 60 bits.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"

namespace miniamr::bench {

// Morton code of k's lower corner at kMaxLevel resolution (x in bit 0 of each 3-bit digit).
// On one root block, (code, level) ordered lexicographically is octree::MortonLess order.
std::uint64_t code_in_root(const octree::Key& k);
octree::Key key_from_code(std::uint64_t code, int level);

// The leaves, in Morton order, of the unit cube refined recursively wherever an octant touches
// the sphere surface |p - centre| = radius (closest point inside, farthest point outside), down
// to `max_level`.
std::vector<octree::Key> refine_sphere_surface(int max_level, double cx, double cy, double cz,
                                               double radius);

// The coarsest refinement of `leaves` (a complete linear octree of the unit cube, Morton order)
// in which face neighbours differ by at most one level. Leaves are only ever split.
std::vector<octree::Key> balance_faces(std::span<const octree::Key> leaves);

// Number of (leaf, face) pairs of the unit cube mesh that break 2:1 face balance, found with
// LeafSet::across (for checks, not speed).
std::int64_t count_face_balance_violations(const octree::LeafSet& leaves);

}  // namespace miniamr::bench
