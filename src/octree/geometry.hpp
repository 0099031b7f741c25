// Where a block lies in the unit cube [0,1]^3, as doubles.
#pragma once

#include <array>

#include "octree/key.hpp"

namespace miniamr::octree {

struct Box {
  std::array<double, 3> lo{0, 0, 0};
  std::array<double, 3> hi{0, 0, 0};
};

// Each bound is one division of two exactly representable integers (corner / domain extent),
// so it is the correctly rounded value of the rational, the same double the reference computes
// as (centre - half)/mesh_size.
inline Box extent(const Key& k, const RootGrid& grid) {
  Box b;
  for (int d = 0; d < 3; ++d) {
    const double n = double(grid.extent(d));
    b.lo[d] = double(k.x[d]) / n;
    b.hi[d] = double(std::uint64_t{k.x[d]} + side(k.level)) / n;
  }
  return b;
}

}  // namespace miniamr::octree
