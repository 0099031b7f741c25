// The 7- and 27-point stencils against a naive work-array implementation of spec §3.4, their
// fused checksums, and conservation on a block with reflective ghosts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/init_values.hpp"
#include "stencil/stencil_kernels.hpp"

namespace miniamr::stencil {
namespace {

// Reference: all new values from a copy of the old ones, formulas written out literally.
void naive7(Block& b, int v) {
  const BlockShape& s = b.shape();
  const std::vector<double> old(b.var(v).begin(), b.var(v).end());
  auto o = [&](int i, int j, int k) { return old[s.at(i, j, k)]; };
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k)
        b.var(v)[s.at(i, j, k)] = (o(i - 1, j, k) + o(i, j - 1, k) + o(i, j, k - 1) + o(i, j, k) +
                                   o(i, j, k + 1) + o(i, j + 1, k) + o(i + 1, j, k)) /
                                  7.0;
}

void naive27(Block& b, int v) {
  const BlockShape& s = b.shape();
  const std::vector<double> old(b.var(v).begin(), b.var(v).end());
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k) {
        double p[3];
        for (int di = -1; di <= 1; ++di) {
          double sum = 0;
          bool first = true;
          for (int dj = -1; dj <= 1; ++dj)
            for (int dk = -1; dk <= 1; ++dk) {
              const double x = old[s.at(i + di, j + dj, k + dk)];
              sum = first ? x : sum + x;
              first = false;
            }
          p[di + 1] = sum;
        }
        b.var(v)[s.at(i, j, k)] = (p[0] + p[1] + p[2]) / 27.0;
      }
}

double total(const Block& b, int v) {
  const BlockShape& s = b.shape();
  long double t = 0;
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k) t += b.var(v)[s.at(i, j, k)];
  return static_cast<double>(t);
}

void reflect_all(Block& b, bool edges) {
  for (int f = 0; f < 6; ++f) fill_boundary(b, f, {0, b.shape().num_vars}, edges);
}

Block random_block(const BlockShape& s, std::uint64_t seed) {
  Block b(s);
  fill_initial(b, {0, 0, 0}, 0, seed);
  // non-zero ghosts, so every neighbour access is tested
  for (int v = 0; v < s.num_vars; ++v)
    for (int i = 0; i <= s.nx + 1; ++i)
      for (int j = 0; j <= s.ny + 1; ++j)
        for (int k = 0; k <= s.nz + 1; ++k)
          if (i == 0 || j == 0 || k == 0 || i > s.nx || j > s.ny || k > s.nz)
            b.var(v)[s.at(i, j, k)] = 1.0 + double((i * 7 + j * 3 + k) % 11);
  return b;
}

// nz = 8 and 16 take the fixed-width kernels, the others the general one.
const BlockShape kShapes[] = {{4, 4, 4, 2},  {2, 2, 2, 1}, {5, 3, 9, 2}, {16, 16, 16, 1},
                              {3, 8, 17, 1}, {8, 8, 8, 3}, {3, 5, 8, 2}, {1, 1, 8, 1},
                              {5, 7, 16, 2}, {2, 3, 16, 1}};

TEST(StencilKernels, SevenPointMatchesNaiveBitwise) {
  for (const BlockShape& s : kShapes) {
    Block a = random_block(s, 3), b = a;
    std::vector<double> scratch(stencil_scratch_size(s), 1e300);  // garbage must not matter
    for (int sweep = 0; sweep < 3; ++sweep) {  // later sweeps start from the kernel's own output
      for (int v = 0; v < s.num_vars; ++v) {
        const double sum = stencil7(a, v, scratch);
        naive7(b, v);
        EXPECT_EQ(sum, interior_sum(a, v));
      }
      EXPECT_EQ(std::memcmp(a.data(), b.data(), s.doubles() * sizeof(double)), 0)
          << s.nx << "x" << s.ny << "x" << s.nz << " sweep " << sweep;
    }
  }
}

TEST(StencilKernels, TwentySevenPointMatchesNaiveBitwise) {
  for (const BlockShape& s : kShapes) {
    Block a = random_block(s, 4), b = a;
    std::vector<double> scratch(stencil_scratch_size(s), -1e300);
    for (int v = 0; v < s.num_vars; ++v) {
      const double sum = stencil27(a, v, scratch);
      naive27(b, v);
      EXPECT_EQ(sum, interior_sum(a, v));
    }
    EXPECT_EQ(std::memcmp(a.data(), b.data(), s.doubles() * sizeof(double)), 0) << s.nx << s.nz;
  }
}

TEST(StencilKernels, HandCheckedSevenPoint) {
  const BlockShape s{3, 3, 3, 1};
  Block b(s);
  b.var(0)[s.at(2, 2, 2)] = 7.0;
  b.var(0)[s.at(0, 1, 1)] = 14.0;  // a ghost next to (1,1,1)
  std::vector<double> scratch(stencil_scratch_size(s));
  const double sum = stencil7(b, 0, scratch);
  EXPECT_EQ(b.var(0)[s.at(2, 2, 2)], 1.0);
  EXPECT_EQ(b.var(0)[s.at(1, 2, 2)], 1.0);
  EXPECT_EQ(b.var(0)[s.at(2, 2, 3)], 1.0);
  EXPECT_EQ(b.var(0)[s.at(2, 3, 2)], 1.0);
  EXPECT_EQ(b.var(0)[s.at(1, 1, 1)], 2.0);
  EXPECT_EQ(b.var(0)[s.at(1, 1, 2)], 0.0);
  EXPECT_EQ(b.var(0)[s.at(0, 1, 1)], 14.0);  // ghosts untouched
  EXPECT_EQ(sum, 9.0);
}

TEST(StencilKernels, InteriorSumIsTheInteriorTotal) {
  const BlockShape s{5, 3, 19, 1};
  Block b(s);
  std::fill_n(b.data(), s.doubles(), 1e6);  // ghosts must not count
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k) b.var(0)[s.at(i, j, k)] = 0.25 * (i + j + k);
  double want = 0;
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j)
      for (int k = 1; k <= s.nz; ++k) want += 0.25 * (i + j + k);
  EXPECT_EQ(interior_sum(b, 0), want);  // exact: quarters of small integers
}

// Reflective ghosts make one block a closed system: 7-point conserves its total, and 27-point
// does too once edges and corners are filled in sequence.
TEST(StencilKernels, ConservesWithReflectiveBoundary) {
  for (const BlockShape& s : kShapes) {
    Block b(s);
    fill_initial(b, {0, 0, 0}, 0, 11);
    std::vector<double> scratch(stencil_scratch_size(s));
    for (int v = 0; v < s.num_vars; ++v) {
      const double before = total(b, v);
      for (int step = 0; step < 10; ++step) {
        reflect_all(b, false);
        const double sum = stencil7(b, v, scratch);
        EXPECT_NEAR(sum, before, 1e-12 * before);
        reflect_all(b, true);
        const double sum27 = stencil27(b, v, scratch);
        EXPECT_NEAR(sum27, before, 1e-12 * before);
      }
      EXPECT_NEAR(total(b, v), before, 1e-12 * before);
    }
  }
}

TEST(StencilKernels, SmoothsTowardTheMean) {
  const BlockShape s{8, 8, 8, 1};
  Block b(s);
  fill_initial(b, {0, 0, 0}, 0, 2);
  std::vector<double> scratch(stencil_scratch_size(s));
  auto spread = [&] {
    double lo = 1e9, hi = -1e9;
    for (int i = 1; i <= 8; ++i)
      for (int j = 1; j <= 8; ++j)
        for (int k = 1; k <= 8; ++k) {
          lo = std::min(lo, b.var(0)[s.at(i, j, k)]);
          hi = std::max(hi, b.var(0)[s.at(i, j, k)]);
        }
    return hi - lo;
  };
  const double before = spread();
  for (int step = 0; step < 20; ++step) {
    reflect_all(b, false);
    stencil7(b, 0, scratch);
  }
  EXPECT_LT(spread(), 0.5 * before);
}

}  // namespace
}  // namespace miniamr::stencil
