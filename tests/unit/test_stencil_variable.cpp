// `--stencil 0` variable-work kernels: kernel choice, formulas against a literal transcription
// of variable_kernels.hpp, clamp range, fused sums, and conservation of variable 0.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/init_values.hpp"
#include "stencil/stencil_kernels.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::stencil {
namespace {

using K = VariableKernel;

TEST(StencilVariable, CoefficientsAreDeterministicAndInRange) {
  const VariableCoeffs a = make_variable_coeffs(40, 17), b = make_variable_coeffs(40, 17);
  const VariableCoeffs c = make_variable_coeffs(40, 18);
  ASSERT_EQ(a.a0.size(), 10u);
  EXPECT_EQ(a.a1, b.a1);
  EXPECT_EQ(a.a0, b.a0);
  EXPECT_NE(a.a1, c.a1);
  for (double x : a.a0) {
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
  EXPECT_EQ(make_variable_coeffs(7, 1).a0.size(), 1u);
  EXPECT_EQ(make_variable_coeffs(3, 1).a0.size(), 0u);
}

TEST(StencilVariable, KernelChoice) {
  // 10 vars: mat = 2, vars 1..7 cycle, 0, 8 and 9 use 7-point.
  for (std::int64_t stage = -7; stage < 20; ++stage) {
    EXPECT_EQ(variable_kernel(10, 0, stage), K::kSevenPoint);
    EXPECT_EQ(variable_kernel(10, 8, stage), K::kSevenPoint);
    EXPECT_EQ(variable_kernel(10, 9, stage), K::kSevenPoint);
  }
  const K order[6] = {K::kMix, K::kLineX, K::kLineY, K::kLineZ, K::kWeighted7, K::kPlain27};
  for (std::int64_t stage = 0; stage < 18; ++stage)
    for (int v = 1; v < 8; ++v) EXPECT_EQ(variable_kernel(10, v, stage), order[stage % 6]);
  EXPECT_EQ(variable_kernel(10, 1, -1), K::kPlain27);
  EXPECT_EQ(variable_kernel(3, 1, 0), K::kSevenPoint);  // mat = 0
}

// Literal transcription of the documented formulas with a work array.
void naive(Block& b, int v, K kernel, const VariableCoeffs& co) {
  const BlockShape& s = b.shape();
  const std::vector<double> old(b.var(v).begin(), b.var(v).end());
  // Variables past the last whole material (v >= 4 * mat) have no coefficient: they use the
  // 7-point stencil, which needs none.
  const double a1 = co.a1;
  const double m = std::size_t(v / 4) < co.a0.size() ? co.a0[std::size_t(v / 4)] : 0.0;
  const int g = v / 4;
  auto o = [&](int i, int j, int k) { return old[s.at(i, j, k)]; };
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k) {
        const double C = o(i, j, k);
        const double W = o(i - 1, j, k), E = o(i + 1, j, k), S = o(i, j - 1, k), N = o(i, j + 1, k),
                     D = o(i, j, k - 1), U = o(i, j, k + 1);
        double x = 0;
        switch (kernel) {
          case K::kMix: {
            const double p1 = b.var(4 * g + (v + 1) % 4)[s.at(i, j, k)];
            const double p2 = b.var(4 * g + (v + 2) % 4)[s.at(i, j, k)];
            x = a1 * C + m * p1 * p2 + (1 - a1) * C * C;
            break;
          }
          case K::kLineX:
            x = (W + C + E) / 3.0 + m * (W - C) * (E - C);
            break;
          case K::kLineY:
            x = (S + C + N) / 3.0 + m * (S - C) * (N - C);
            break;
          case K::kLineZ:
            x = (D + C + U) / 3.0 + m * (D - C) * (U - C);
            break;
          case K::kWeighted7: {
            const double wc = 1 + a1, wn = 1 + m;
            x = (wc * C + wn * (W + S + D + U + N + E)) / (wc + 6 * wn);
            break;
          }
          case K::kPlain27: {
            double p = 0;
            for (int di = -1; di <= 1; ++di) {
              double q = 0;
              for (int dj = -1; dj <= 1; ++dj)
                for (int dk = -1; dk <= 1; ++dk) q += o(i + di, j + dj, k + dk);
              p += q;
            }
            x = p / 27.0;
            break;
          }
          case K::kSevenPoint:
            x = (W + S + D + C + U + N + E) / 7.0;
            break;
        }
        if (kernel != K::kSevenPoint) {
          x = std::fabs(x);
          if (x >= 1) x = x / (a1 + co.a0[0] + x);
          if (x < 0.1) x = x * (10 - a1);
        }
        b.var(v)[s.at(i, j, k)] = x;
      }
}

TEST(StencilVariable, KernelsMatchTheirFormulas) {
  const BlockShape s{4, 6, 10, 9};  // mat = 2: vars 1..7 variable, 8 is 7-point
  const VariableCoeffs co = make_variable_coeffs(s.num_vars, 5);
  std::vector<double> scratch(stencil_scratch_size(s));
  for (std::int64_t stage = 0; stage < 6; ++stage) {
    Block a(s);
    fill_initial(a, {0, 0, 0}, 0, 77);
    // Scale some values so both clamp branches are exercised.
    for (std::size_t n = 0; n < s.doubles(); n += 3) a.data()[n] *= 4.0;
    for (int f = 0; f < 6; ++f) fill_boundary(a, f, {0, s.num_vars}, true);
    Block b = a;
    for (int v = 0; v < s.num_vars; ++v) {
      const double sum = stencil_variable(a, v, stage, co, scratch);
      naive(b, v, variable_kernel(s.num_vars, v, stage), co);
      EXPECT_EQ(sum, interior_sum(a, v)) << "stage " << stage << " var " << v;
      for (int i = 0; i <= s.nx + 1; ++i)
        for (int j = 0; j <= s.ny + 1; ++j)
          for (int k = 0; k <= s.nz + 1; ++k)
            ASSERT_DOUBLE_EQ(a.var(v)[s.at(i, j, k)], b.var(v)[s.at(i, j, k)])
                << "stage " << stage << " var " << v << " at " << i << j << k;
    }
  }
}

TEST(StencilVariable, ClampKeepsValuesInUnitIntervalAndVarZeroConserves) {
  const BlockShape s{8, 8, 8, 12};
  const VariableCoeffs co = make_variable_coeffs(s.num_vars, 9);
  std::vector<double> scratch(stencil_scratch_size(s));
  Block b(s);
  fill_initial(b, {0, 0, 0}, 0, 4);
  const double var0 = interior_sum(b, 0);
  for (std::int64_t stage = 0; stage < 30; ++stage) {
    for (int f = 0; f < 6; ++f) fill_boundary(b, f, {0, s.num_vars}, true);
    for (int v = 0; v < s.num_vars; ++v) {
      const double sum = stencil_variable(b, v, stage, co, scratch);
      if (v == 0) {
        EXPECT_NEAR(sum, var0, 1e-12 * var0);
      }
      if (variable_kernel(s.num_vars, v, stage) == K::kSevenPoint) continue;
      for (int i = 1; i <= s.nx; ++i)
        for (int j = 1; j <= s.ny; ++j)
          for (int k = 1; k <= s.nz; ++k) {
            const double x = b.var(v)[s.at(i, j, k)];
            ASSERT_GE(x, 0.0);
            ASSERT_LT(x, 1.0);
          }
    }
  }
}

}  // namespace
}  // namespace miniamr::stencil
