// `--stencil 0`, "variable work" (spec §3.4): per-variable kernels of different cost and shape.
//
// mat = num_vars / 4 materials; variable v in 1 .. 4*mat-1 belongs to material g = v / 4 and has
// partners p1 = 4g + (v+1)%4 and p2 = 4g + (v+2)%4 (never v itself). With m = a0[g] and the
// OLD values of v written C (centre), W/E, S/N, D/U (x, y, z neighbours), calc_stage % 6 picks:
//   0 mix:        new = a1*C + m*P1*P2 + (1-a1)*C*C        (P1, P2: current partner values)
//   1 line x:     new = (W + C + E)/3 + m*(W - C)*(E - C)
//   2 line y:     new = (S + C + N)/3 + m*(S - C)*(N - C)
//   3 line z:     new = (D + C + U)/3 + m*(D - C)*(U - C)
//   4 weighted 7: new = (wc*C + wn*(W + S + D + U + N + E)) / (wc + 6*wn), wc = 1+a1, wn = 1+m
//   5 plain 27:   the 27-point stencil of stencil27()
// followed by the clamp: x = |new|; if x >= 1: x = x / (a1 + a0[0] + x); if x < 0.1:
// x = x * (10 - a1). Variable 0 and variables >= 4*mat use the conservative 7-point stencil;
// only variable 0 is meant to keep its sum.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "stencil/block.hpp"

namespace miniamr::stencil {

struct VariableCoeffs {
  double a1 = 0.0;
  std::vector<double> a0;  // one per material (num_vars / 4 entries)
};

// Coefficients in [0,1) from a counter-based hash of `seed` (identical on every rank).
VariableCoeffs make_variable_coeffs(int num_vars, std::uint64_t seed);

enum class VariableKernel { kSevenPoint, kMix, kLineX, kLineY, kLineZ, kWeighted7, kPlain27 };

// The kernel variable `var` of a block with `num_vars` variables uses at `calc_stage`.
VariableKernel variable_kernel(int num_vars, int var, std::int64_t calc_stage);

// Applies that kernel (and the clamp) in place to the interior of `var`; returns the sum of
// the new interior values in interior_sum's order. `scratch`: stencil_scratch_size() doubles.
double stencil_variable(Block& block, int var, std::int64_t calc_stage,
                        const VariableCoeffs& coeffs, std::span<double> scratch);

}  // namespace miniamr::stencil
