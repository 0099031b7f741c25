// Cuts of the curve into shares: equal shares cut exactly as the equal cut does (bitwise the
// same owners for any weights and rank count), unequal shares follow their proportions, and the
// owners never decrease along the curve.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <span>
#include <vector>

#include <gtest/gtest.h>

#include "sfc/partition.hpp"
#include "sfc/shares.hpp"

using namespace miniamr;

namespace {

std::vector<std::int64_t> random_weights(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> w(1, 1000);
  std::vector<std::int64_t> out(n);
  for (auto& x : out) x = w(rng);
  return out;
}

}  // namespace

TEST(ShareCut, EqualSharesCutAsTheEqualCut) {
  for (int parts = 1; parts <= 7; ++parts) {
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
      const auto w = random_weights(50 + seed * 7, seed);
      std::int64_t total = 0;
      for (auto x : w) total += x;
      const std::vector<double> shares(std::size_t(parts), 0.25);
      const auto bounds = sfc::share_bounds(total, shares);
      EXPECT_EQ(sfc::cut(w, 0, bounds), sfc::cut(w, 0, total, parts))
          << parts << " parts, seed " << seed;
      // The same seen from a rank holding the second half of the curve.
      const std::span<const std::int64_t> tail(w.begin() + std::ptrdiff_t(w.size() / 2), w.end());
      std::int64_t offset = 0;
      for (std::size_t i = 0; i < w.size() / 2; ++i) offset += w[i];
      EXPECT_EQ(sfc::cut(tail, offset, bounds), sfc::cut(tail, offset, total, parts));
    }
  }
}

TEST(ShareCut, BoundsFollowTheShares) {
  const auto b = sfc::share_bounds(900, std::vector<double>{2.0, 1.0});
  EXPECT_EQ(b, (std::vector<std::int64_t>{0, 600, 900}));
  const auto c = sfc::share_bounds(1000, std::vector<double>{0.1, 0.6, 0.3});
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 100, 700, 1000}));
  // One block of weight 100 per position: part r gets the blocks whose start lies in its range.
  const std::vector<std::int64_t> w(10, 100);
  EXPECT_EQ(sfc::cut(w, 0, c), (std::vector<int>{0, 1, 1, 1, 1, 1, 1, 2, 2, 2}));
  // The same cut seen from the rank holding positions 4..9 only.
  EXPECT_EQ(sfc::cut(std::vector<std::int64_t>(6, 100), 400, c),
            (std::vector<int>{1, 1, 1, 2, 2, 2}));
}

TEST(ShareCut, OwnersNeverDecreaseAndEveryPartIsReachable) {
  const auto w = random_weights(400, 7);
  std::int64_t total = 0;
  for (auto x : w) total += x;
  const auto t = sfc::cut(w, 0, sfc::share_bounds(total, std::vector<double>{1, 3, 0.5, 2}));
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end()));
  for (int r = 0; r < 4; ++r) EXPECT_NE(std::find(t.begin(), t.end(), r), t.end()) << r;
}

TEST(ShareCut, NothingToCutGoesToTheFirstPart) {
  const std::vector<std::int64_t> none(3, 0);
  EXPECT_EQ(sfc::cut(none, 0, sfc::share_bounds(0, std::vector<double>{1, 2})),
            (std::vector<int>{0, 0, 0}));
}

TEST(ShareCut, FamiliesGoWithTheirFirstLeaf) {
  // Positions 0..9: a family of 8 at 1..8 cut after its third leaf, and singles at 0 and 9.
  const std::vector<std::size_t> family{0, 1, 1, 1, 1, 1, 1, 1, 1, 9};
  std::vector<int> first{0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  sfc::keep_families_together(first, family);
  EXPECT_EQ(first, (std::vector<int>{0, 0, 0, 0, 0, 0, 0, 0, 0, 1}));
}

TEST(Shares, BoundsAreThoseOfTheDenseShares) {
  std::mt19937_64 rng(3);
  for (int parts = 1; parts <= 40; parts += 3) {
    for (int trial = 0; trial < 20; ++trial) {
      // Most parts at one value, a few apart (a balancer's settled speeds), or all equal.
      std::vector<double> values(std::size_t(parts), 1.0);
      for (int k = 0; k < trial % 4; ++k)
        values[std::size_t(rng() % std::uint64_t(parts))] = 0.25 + double(rng() % 300) / 100.0;
      const sfc::Shares shares(values);
      const std::int64_t total = 1 + std::int64_t(rng() % 100000);
      const auto dense = sfc::share_bounds(total, values);
      ASSERT_EQ(shares.values(), values);
      EXPECT_EQ(shares.bound(0, total), 0);
      EXPECT_EQ(shares.bound(parts, total), total);
      for (int r = 0; r <= parts; ++r) {
        const std::int64_t b = shares.bound(r, total);
        EXPECT_EQ(b, dense[std::size_t(r)]) << parts << " parts, part " << r;
        if (r > 0) {
          EXPECT_GE(b, shares.bound(r - 1, total));
        }
      }
    }
  }
}

TEST(Shares, EachRanksCutOfItsLeavesIsTheWholeCurvesCut) {
  std::mt19937_64 rng(4);
  for (int parts = 1; parts <= 9; ++parts) {
    for (std::uint64_t seed = 1; seed <= 10; ++seed) {
      std::vector<double> values(std::size_t(parts), 2.0);
      values[seed % std::size_t(parts)] = 0.5;  // a slow part
      const sfc::Shares shares(values);
      const auto w = random_weights(200, seed);
      std::int64_t total = 0;
      for (const auto x : w) total += x;
      // The whole curve at once, as the part holding each leaf's start.
      std::vector<std::int64_t> bounds(std::size_t(parts) + 1);
      for (int r = 0; r <= parts; ++r) bounds[std::size_t(r)] = shares.bound(r, total);
      const auto whole = sfc::cut(w, 0, bounds);
      ASSERT_EQ(shares.cut(w, 0, total), whole);
      // In pieces, each from its offset, as ranks cut their own leaves.
      std::vector<int> pieces;
      std::int64_t offset = 0;
      for (std::size_t first = 0; first < w.size();) {
        const std::size_t n = std::min(w.size() - first, std::size_t(1 + rng() % 40));
        const auto part = shares.cut(std::span(w).subspan(first, n), offset, total);
        pieces.insert(pieces.end(), part.begin(), part.end());
        for (std::size_t i = first; i < first + n; ++i) offset += w[i];
        first += n;
      }
      EXPECT_EQ(pieces, whole) << parts << " parts, seed " << seed;
    }
  }
}

TEST(Shares, TravelAsTheFewThatDiffer) {
  // 4096 ranks, one at half speed: five numbers, not 4096.
  std::vector<double> values(4096, 1.0);
  values[1234] = 0.5;
  const sfc::Shares shares(values);
  EXPECT_FALSE(shares.equal());
  EXPECT_EQ(shares.packed().size(), 5u);
  EXPECT_EQ(sfc::Shares::unpacked(shares.packed()), shares);
  EXPECT_EQ(shares.value(1234), 0.5);
  EXPECT_EQ(shares.value(1235), 1.0);
  const sfc::Shares equal(std::vector<double>(7, 0.3));
  EXPECT_TRUE(equal.equal());
  EXPECT_EQ(equal.packed().size(), 3u);
  EXPECT_EQ(sfc::Shares::unpacked(equal.packed()), equal);
  EXPECT_FALSE(sfc::Shares{}.given());
  EXPECT_TRUE(sfc::Shares{}.equal());
}
