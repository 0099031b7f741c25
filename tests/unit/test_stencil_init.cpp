// fill_initial: values in [0,1), ghosts zero, and a pure function of the global cell position,
// so different block decompositions of the same cells see identical data.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>

#include "stencil/block.hpp"
#include "stencil/init_values.hpp"

namespace miniamr::stencil {
namespace {

bool is_ghost(const BlockShape& s, int i, int j, int k) {
  return i == 0 || j == 0 || k == 0 || i == s.nx + 1 || j == s.ny + 1 || k == s.nz + 1;
}

TEST(StencilInit, ValuesInUnitIntervalAndGhostsZero) {
  const BlockShape s{4, 6, 2, 3};
  Block b(s);
  std::fill_n(b.data(), s.doubles(), 5.0);  // ghosts must be reset too
  fill_initial(b, {8, 12, 4}, 1, 42);
  for (int v = 0; v < s.num_vars; ++v)
    for (int i = 0; i <= s.nx + 1; ++i)
      for (int j = 0; j <= s.ny + 1; ++j)
        for (int k = 0; k <= s.nz + 1; ++k) {
          const double x = b.var(v)[s.at(i, j, k)];
          if (is_ghost(s, i, j, k)) {
            EXPECT_EQ(x, 0.0);
          } else {
            EXPECT_GE(x, 0.0);
            EXPECT_LT(x, 1.0);
            EXPECT_EQ(x, initial_value({8 + i - 1, 12 + j - 1, 4 + k - 1}, 1, v, 42));
          }
        }
}

// One 8x4x6 block against 2x2x3 blocks of 4x2x2 and against 8 slabs of 1x4x6 cells.
TEST(StencilInit, IndependentOfDecomposition) {
  const int nv = 2;
  const std::uint64_t seed = 7;
  const int level = 2;
  const std::array<std::int64_t, 3> origin{16, 4, 30};
  Block whole(BlockShape{8, 4, 6, nv});
  fill_initial(whole, origin, level, seed);
  const BlockShape& ws = whole.shape();

  auto check = [&](const BlockShape& part, std::array<int, 3> parts) {
    for (int bx = 0; bx < parts[0]; ++bx)
      for (int by = 0; by < parts[1]; ++by)
        for (int bz = 0; bz < parts[2]; ++bz) {
          Block b(part);
          fill_initial(
              b, {origin[0] + bx * part.nx, origin[1] + by * part.ny, origin[2] + bz * part.nz},
              level, seed);
          for (int v = 0; v < nv; ++v)
            for (int i = 1; i <= part.nx; ++i)
              for (int j = 1; j <= part.ny; ++j)
                for (int k = 1; k <= part.nz; ++k)
                  ASSERT_EQ(
                      b.var(v)[part.at(i, j, k)],
                      whole.var(v)[ws.at(bx * part.nx + i, by * part.ny + j, bz * part.nz + k)]);
        }
  };
  check(BlockShape{4, 2, 2, nv}, {2, 2, 3});
  check(BlockShape{1, 4, 6, nv}, {8, 1, 1});
}

TEST(StencilInit, DependsOnEveryInput) {
  const double base = initial_value({1, 2, 3}, 0, 0, 1);
  EXPECT_NE(base, initial_value({2, 2, 3}, 0, 0, 1));
  EXPECT_NE(base, initial_value({1, 3, 3}, 0, 0, 1));
  EXPECT_NE(base, initial_value({1, 2, 4}, 0, 0, 1));
  EXPECT_NE(base, initial_value({1, 2, 3}, 1, 0, 1));
  EXPECT_NE(base, initial_value({1, 2, 3}, 0, 1, 1));
  EXPECT_NE(base, initial_value({1, 2, 3}, 0, 0, 2));
  // Swapped coordinates are different cells.
  EXPECT_NE(initial_value({1, 2, 3}, 0, 0, 1), initial_value({2, 1, 3}, 0, 0, 1));
}

TEST(StencilInit, MeanIsAboutOneHalf) {
  Block b(BlockShape{16, 16, 16, 1});
  fill_initial(b, {0, 0, 0}, 0, 123);
  double sum = 0;
  for (int i = 1; i <= 16; ++i)
    for (int j = 1; j <= 16; ++j)
      for (int k = 1; k <= 16; ++k) sum += b.var(0)[b.shape().at(i, j, k)];
  EXPECT_NEAR(sum / 4096.0, 0.5, 0.02);
}

}  // namespace
}  // namespace miniamr::stencil
