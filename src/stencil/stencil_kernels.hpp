// The fixed stencils of spec §3.4 and the per-block checksum. Each updates the interior cells of
// one variable in place from its old values (ghosts must be filled) and returns the sum of the
// new interior values, computed in the same pass in the order of interior_sum, so
// stencilN(b, v, s) == interior_sum(b, v) bitwise right after the call.
#pragma once

#include <cstddef>
#include <span>

#include "stencil/block.hpp"
#include "stencil/ghost_layers.hpp"
#include "stencil/plane_sweep.hpp"

namespace miniamr::stencil {

// new = (W + S + D + C + U + N + E) / 7.0, added in exactly that order.
// `scratch` holds at least stencil_scratch_size(block.shape()) doubles.
double stencil7(Block& block, int var, std::span<double> scratch);
// The same with each face's ghosts read from `layers` (ghost_layers.hpp) instead of the block's
// own ghost layer; bitwise the same as stencil7 after filling the ghosts from those layers.
double stencil7_from(Block& block, int var, const GhostLayers& layers, std::span<double> scratch);

// new = (P(i-1) + P(i) + P(i+1)) / 27.0, P(x) = the 9 values of plane x added in the order
// (j-1,k-1), (j-1,k), (j-1,k+1), (j,k-1), ..., (j+1,k+1). Needs edge and corner ghosts.
double stencil27(Block& block, int var, std::span<double> scratch);

// Sum of the interior cells of `var` (LaneSum order: rows x-outer, y, lanes over z).
double interior_sum(const Block& block, int var);

}  // namespace miniamr::stencil
