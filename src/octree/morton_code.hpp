// A key's place on the Morton curve as one integer: the lower corner's three 32-bit coordinates
// interleaved (z above y above x at each bit, as morton_less decides), then the level. Codes
// order as morton_less orders keys, and compare in two instructions where morton_less takes a
// dozen with branches: LeafSet keeps its keys' codes beside them for its binary searches, which
// the ghost plans and the 2:1 closure call for every face of every leaf.
#pragma once

#include <cstdint>

#include "octree/key.hpp"

namespace miniamr::octree {

__extension__ typedef unsigned __int128 MortonCode;  // 96 bits of corner, 5 of level

// Moves bit i of the low 21 bits of v to bit 3i ("magic bits": five shift-and-mask steps).
constexpr std::uint64_t spread3(std::uint64_t v) {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x1f00000000ffffULL;
  v = (v | v << 16) & 0x1f0000ff0000ffULL;
  v = (v | v << 8) & 0x100f00f00f00f00fULL;
  v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
  v = (v | v << 2) & 0x1249249249249249ULL;
  return v;
}

// Bit i of a 32-bit word to bit 3i of a 96-bit value.
constexpr MortonCode spread3(std::uint32_t w) {
  return MortonCode(spread3(std::uint64_t(w))) | MortonCode(spread3(std::uint64_t(w >> 21))) << 63;
}

// The finest cell at k's lower corner along the Morton curve: bit j of x[d] at bit 3j + d.
constexpr MortonCode morton_corner(const Key& k) {
  return spread3(k.x[2]) << 2 | spread3(k.x[1]) << 1 | spread3(k.x[0]);
}

// The corner, then the level: a block's ancestors share or precede its corner and are coarser.
constexpr MortonCode morton_code(const Key& k) {
  static_assert(kMaxLevel < 32, "the level takes 5 bits below the corner");
  return morton_corner(k) << 5 | MortonCode(std::uint8_t(k.level));
}

}  // namespace miniamr::octree
