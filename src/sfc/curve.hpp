// Positions on a space-filling curve through the finest lattice. Keys stay sorted in Morton
// order on each rank (lookups); the curve chosen here decides ownership: each rank owns a
// contiguous range of positions. Every block covers a contiguous range of positions on either
// curve, so a region's possible owners follow from the range's two ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"

namespace miniamr::sfc {

__extension__ typedef unsigned __int128 Position;  // 3 x 32 bits

enum class Curve { kMorton, kHilbert };

struct CurveSpace {
  Curve curve = Curve::kMorton;
  int bits = 32;  // bits per coordinate of the lattice the curve runs through

  // Morton runs through the whole 32-bit lattice; Hilbert through the smallest power-of-two
  // cube holding the root grid (truncated to the grid), so it stays continuous inside.
  static CurveSpace make(Curve curve, const octree::RootGrid& grid);
};

// Bits a coordinate of the root grid needs: the least b with 2^b >= its widest extent.
int root_bits(const octree::RootGrid& grid);

// First and last position covered by block k.
Position first_position(const octree::Key& k, const CurveSpace& space);
Position last_position(const octree::Key& k, const CurveSpace& space);

// The indices of `leaves` sorted by curve position (the identity for Morton).
std::vector<std::size_t> curve_order(const octree::LeafSet& leaves, const CurveSpace& space);

}  // namespace miniamr::sfc
