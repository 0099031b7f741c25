// Initial field values (spec §3.1, replaced by a decomposition-independent rule).
#pragma once

#include <array>
#include <cstdint>

#include "stencil/block.hpp"

namespace miniamr::stencil {

// Fills every variable of `block` with its initial data and zeroes all ghost cells.
//
// Interior cell (i,j,k) of variable v (i,j,k in 1..n) gets
//   value = to_unit(H(seed, level, v, gx, gy, gz)),   (gx,gy,gz) = first_cell + (i-1, j-1, k-1)
// where H chains splitmix64 over the tuple (hash.hpp) and to_unit keeps its top 53 bits, so the
// value lies in [0,1) and is a pure function of the global cell position at that level. Unlike
// the reference (one rand() stream per rank), two decompositions of the same cells therefore
// produce identical data. `first_cell` is the global index of interior cell (1,1,1) counted in
// cells of `level` (block index at that level times the block's cell count per direction).
void fill_initial(Block& block, std::array<std::int64_t, 3> first_cell, int level,
                  std::uint64_t seed);

// The value fill_initial gives one cell (exposed for tests and plots).
double initial_value(std::array<std::int64_t, 3> global_cell, int level, int var,
                     std::uint64_t seed);

}  // namespace miniamr::stencil
