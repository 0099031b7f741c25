// Curve positions: Morton agrees with the key order, both curves nest (a block's range is the
// union of its children's), and the Hilbert curve is continuous on power-of-two root grids.
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "sfc/curve.hpp"

using namespace miniamr;
using octree::Key;

namespace {

std::vector<Key> uniform(const octree::RootGrid& grid, int level) {
  std::vector<Key> keys = octree::root_leaves(grid);
  for (int l = 0; l < level; ++l) {
    std::vector<Key> next;
    for (const Key& k : keys)
      for (int o = 0; o < 8; ++o) next.push_back(octree::child(k, o));
    keys = std::move(next);
  }
  std::sort(keys.begin(), keys.end(), octree::MortonLess{});
  return keys;
}

bool face_adjacent(const Key& a, const Key& b) {
  int differ = 0;
  for (int d = 0; d < 3; ++d) {
    const auto da = a.index(d), db = b.index(d);
    if (da == db) continue;
    if (da + 1 != db && db + 1 != da) return false;
    ++differ;
  }
  return differ == 1;
}

}  // namespace

TEST(Curve, MortonPositionsFollowTheKeyOrder) {
  const octree::RootGrid grid{{3, 2, 1}};
  const auto space = sfc::CurveSpace::make(sfc::Curve::kMorton, grid);
  const auto keys = uniform(grid, 2);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i)
    EXPECT_LT(sfc::last_position(keys[i], space), sfc::first_position(keys[i + 1], space));
}

// The Morton position is the bitwise interleave of the corner's coordinates, z most significant
// at each bit, checked bit by bit against keys deep enough to set every coordinate bit.
TEST(Curve, MortonPositionIsTheBitwiseInterleave) {
  const octree::RootGrid grid{{3, 2, 2}};
  const auto space = sfc::CurveSpace::make(sfc::Curve::kMorton, grid);
  std::uint64_t seed = 12345;
  for (Key k : octree::root_leaves(grid)) {
    for (int l = 0; l < octree::kMaxLevel; ++l) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      k = octree::child(k, int(seed >> 61));
      sfc::Position want = 0;
      for (int j = 31; j >= 0; --j)
        for (const int d : {2, 1, 0}) want = want << 1 | sfc::Position((k.x[d] >> j) & 1u);
      ASSERT_EQ(sfc::first_position(k, space), want) << octree::to_string(k);
    }
  }
}

TEST(Curve, BothCurvesNest) {
  const octree::RootGrid grid{{3, 1, 2}};
  for (const auto curve : {sfc::Curve::kMorton, sfc::Curve::kHilbert}) {
    const auto space = sfc::CurveSpace::make(curve, grid);
    for (const Key& k : uniform(grid, 1)) {
      std::vector<std::pair<sfc::Position, sfc::Position>> kids;
      for (int o = 0; o < 8; ++o) {
        const Key c = octree::child(k, o);
        kids.push_back({sfc::first_position(c, space), sfc::last_position(c, space)});
      }
      std::sort(kids.begin(), kids.end());
      EXPECT_EQ(kids.front().first, sfc::first_position(k, space));
      EXPECT_EQ(kids.back().second, sfc::last_position(k, space));
      for (std::size_t i = 0; i + 1 < kids.size(); ++i)
        EXPECT_EQ(kids[i].second + 1, kids[i + 1].first);  // the children tile the parent
    }
  }
}

TEST(Curve, HilbertIsContinuousOnPowerOfTwoRootGrids) {
  for (const octree::RootGrid grid : {octree::RootGrid{{1, 1, 1}}, octree::RootGrid{{2, 2, 2}}}) {
    const auto space = sfc::CurveSpace::make(sfc::Curve::kHilbert, grid);
    const octree::LeafSet leaves(uniform(grid, 2));
    const auto order = sfc::curve_order(leaves, space);
    std::set<sfc::Position> distinct;
    for (std::size_t p = 0; p < order.size(); ++p) {
      distinct.insert(sfc::first_position(leaves[order[p]], space));
      if (p > 0) {
        EXPECT_TRUE(face_adjacent(leaves[order[p - 1]], leaves[order[p]]))
            << octree::to_string(leaves[order[p - 1]]) << " then "
            << octree::to_string(leaves[order[p]]);
      }
    }
    EXPECT_EQ(distinct.size(), leaves.size());
  }
}

TEST(Curve, HilbertDiffersFromMorton) {
  const octree::RootGrid grid{{1, 1, 1}};
  const octree::LeafSet leaves(uniform(grid, 2));
  const auto order = sfc::curve_order(leaves, sfc::CurveSpace::make(sfc::Curve::kHilbert, grid));
  std::vector<std::size_t> identity(order.size());
  for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = i;
  EXPECT_NE(order, identity);
}
