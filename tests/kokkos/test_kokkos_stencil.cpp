// The Kokkos stencil back end against the native kernels: on random blocks with filled ghosts,
// every cell of the block (ghosts, other variables and padding included) and the returned sums
// must be bitwise equal.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "stencil/block.hpp"
#include "stencil/ghost_fill.hpp"
#include "stencil/init_values.hpp"
#include "stencil/stencil_kernels.hpp"
#include "stencil_kokkos/kokkos_stencil.hpp"

namespace miniamr::stencil {
// Readable test parameters.
void PrintTo(const BlockShape& s, std::ostream* os) {
  *os << s.nx << "x" << s.ny << "x" << s.nz << ", " << s.num_vars << " variables";
}
}  // namespace miniamr::stencil

namespace miniamr::stencil_kokkos {
namespace {

using stencil::Block;
using stencil::BlockShape;

// Kokkos once per test program.
class KokkosEnvironment : public testing::Environment {
 public:
  KokkosEnvironment(int& argc, char** argv) : argc_(argc), argv_(argv) {}
  void SetUp() override { initialize(argc_, argv_); }
  void TearDown() override { finalize(); }

 private:
  int& argc_;
  char** argv_;
};

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

// Random interior values; ghosts reflective (edges and corners included, so the 27-point
// stencil reads no zero ghosts), or, with `random_ghosts`, unrelated values of their own.
Block random_block(const BlockShape& s, std::uint64_t seed, bool random_ghosts) {
  Block b(s);
  fill_initial(b, {3, 5, 7}, 2, seed);
  for (int f = 0; f < 6; ++f) fill_boundary(b, f, {0, s.num_vars}, true);
  if (random_ghosts)
    for (int v = 0; v < s.num_vars; ++v)
      for (int i = 0; i <= s.nx + 1; ++i)
        for (int j = 0; j <= s.ny + 1; ++j)
          for (int k = 0; k <= s.nz + 1; ++k)
            if (i == 0 || j == 0 || k == 0 || i > s.nx || j > s.ny || k > s.nz)
              b.var(v)[s.at(i, j, k)] = stencil::initial_value({i, j, k}, 9, v, seed + 1);
  return b;
}

// Whole storage of both blocks, bit for bit; reports the first difference.
void expect_same_bits(const Block& a, const Block& b) {
  ASSERT_EQ(a.shape(), b.shape());
  const std::size_t n = a.shape().doubles();
  for (std::size_t x = 0; x < n; ++x)
    if (bits(a.data()[x]) != bits(b.data()[x])) {
      ADD_FAILURE() << "first difference at double " << x << ": " << a.data()[x] << " vs "
                    << b.data()[x];
      return;
    }
}

double native(int points, Block& b, int v) {
  std::vector<double> scratch(stencil::stencil_scratch_size(b.shape()));
  return points == 7 ? stencil::stencil7(b, v, scratch) : stencil::stencil27(b, v, scratch);
}

double kokkos(int points, Block& b, int v) {
  return points == 7 ? stencil7(b, v) : stencil27(b, v);
}

// One stencil on every variable of copies of the same block, both ways.
void compare(const BlockShape& s, int points, std::uint64_t seed, bool random_ghosts) {
  const Block start = random_block(s, seed, random_ghosts);
  Block a = start, b = start;
  for (int v = 0; v < s.num_vars; ++v) {
    const double sa = native(points, a, v);
    const double sb = kokkos(points, b, v);
    EXPECT_EQ(bits(sa), bits(sb)) << "var " << v << ": " << sa << " vs " << sb;
    EXPECT_EQ(bits(sb), bits(stencil::interior_sum(b, v))) << "var " << v;
  }
  expect_same_bits(a, b);
}

class KokkosStencil : public testing::TestWithParam<BlockShape> {};

TEST_P(KokkosStencil, SevenPointBitwise) {
  compare(GetParam(), 7, 11, false);
  compare(GetParam(), 7, 12, true);
}

TEST_P(KokkosStencil, TwentySevenPointBitwise) {
  compare(GetParam(), 27, 21, false);
  compare(GetParam(), 27, 22, true);
}

// Several steps of both stencils with the ghosts refilled in between, as a run does them;
// only the variable asked for changes.
TEST_P(KokkosStencil, RepeatedStepsBitwise) {
  const BlockShape s = GetParam();
  Block a = random_block(s, 31, false), b = a;
  for (int step = 0; step < 6; ++step) {
    const int points = step % 3 == 2 ? 27 : 7;
    const int v = step % s.num_vars;
    const Block before = b;
    EXPECT_EQ(bits(native(points, a, v)), bits(kokkos(points, b, v))) << "step " << step;
    for (int w = 0; w < s.num_vars; ++w) {
      if (w == v) continue;
      for (std::size_t x = 0; x < s.cells(); ++x) {
        ASSERT_EQ(bits(before.var(w)[x]), bits(b.var(w)[x])) << "step " << step << " var " << w;
      }
    }
    for (int f = 0; f < 6; ++f) {
      fill_boundary(a, f, {0, s.num_vars}, true);
      fill_boundary(b, f, {0, s.num_vars}, true);
    }
  }
  expect_same_bits(a, b);
}

// nx, ny, nz over {2, 4, 8} (cubic and not), 1 to 3 variables; then odd sizes whose rows end
// in a partial group of 8 lanes, and one large block.
std::vector<BlockShape> shapes() {
  std::vector<BlockShape> out;
  const int n[] = {2, 4, 8};
  int count = 0;
  for (int x : n)
    for (int y : n)
      for (int z : n) out.push_back({x, y, z, 1 + count++ % 3});
  out.push_back({5, 3, 9, 2});
  out.push_back({3, 8, 17, 1});
  out.push_back({1, 1, 1, 2});
  out.push_back({16, 16, 16, 2});
  out.push_back({6, 10, 12, 4});
  return out;
}

std::string shape_name(const testing::TestParamInfo<BlockShape>& info) {
  const BlockShape& s = info.param;
  return std::to_string(s.nx) + "x" + std::to_string(s.ny) + "x" + std::to_string(s.nz) + "v" +
         std::to_string(s.num_vars);
}

INSTANTIATE_TEST_SUITE_P(Shapes, KokkosStencil, testing::ValuesIn(shapes()), shape_name);

TEST(KokkosBackend, Available) {
  EXPECT_TRUE(available());
  EXPECT_NE(std::string(execution_space_name()), "");
  int argc = 0;
  initialize(argc, nullptr);  // already initialised: no effect
  EXPECT_TRUE(available());
}

// Blocks of different shapes one after the other (the work Views grow and are reused).
TEST(KokkosBackend, AlternatingShapes) {
  const BlockShape small{2, 4, 2, 1}, big{12, 9, 20, 2};
  for (int round = 0; round < 3; ++round)
    for (const BlockShape& s : {big, small, big}) compare(s, round == 1 ? 27 : 7, 40, false);
}

// Calls from several host threads at once (as from the runtime's OpenMP loop) are safe and give
// the same bits.
TEST(KokkosBackend, ConcurrentCallers) {
  const BlockShape s{8, 6, 10, 2};
  constexpr int kThreads = 4;
  std::vector<Block> a, b;
  for (int t = 0; t < kThreads; ++t) {
    a.push_back(random_block(s, 50 + std::uint64_t(t), false));
    b.push_back(a.back());
  }
  std::vector<double> sa(kThreads * 2), sb(kThreads * 2);
  for (int t = 0; t < kThreads; ++t) {
    sa[std::size_t(2 * t)] = native(7, a[std::size_t(t)], 0);
    sa[std::size_t(2 * t + 1)] = native(27, a[std::size_t(t)], 1);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        Block c = b[std::size_t(t)];
        sb[std::size_t(2 * t)] = stencil7(c, 0);
        sb[std::size_t(2 * t + 1)] = stencil27(c, 1);
        if (rep == 19) b[std::size_t(t)] = c;
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(bits(sa[std::size_t(2 * t)]), bits(sb[std::size_t(2 * t)]));
    EXPECT_EQ(bits(sa[std::size_t(2 * t + 1)]), bits(sb[std::size_t(2 * t + 1)]));
    expect_same_bits(a[std::size_t(t)], b[std::size_t(t)]);
  }
}

}  // namespace
}  // namespace miniamr::stencil_kokkos

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  testing::AddGlobalTestEnvironment(new miniamr::stencil_kokkos::KokkosEnvironment(argc, argv));
  return RUN_ALL_TESTS();
}
