#include <algorithm>
#include <functional>
#include <random>
#include <set>
#include <unordered_set>

#include <gtest/gtest.h>

#include "octree/geometry.hpp"
#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "octree/morton_code.hpp"

using namespace miniamr::octree;

namespace {

__extension__ typedef unsigned __int128 u128;

// Morton code by bit interleaving, the textbook definition, for comparison with morton_less.
u128 interleave(const Key& k) {
  u128 code = 0;
  for (int b = 31; b >= 0; --b)
    for (int d = 2; d >= 0; --d) code = (code << 1) | ((k.x[d] >> b) & 1u);
  return code;
}

}  // namespace

TEST(Key, ChildParentRoundTrip) {
  const Key r = root_key(1, 2, 3);
  for (int o = 0; o < 8; ++o) {
    const Key c = child(r, o);
    EXPECT_EQ(c.level, 1);
    EXPECT_EQ(c.octant(), o);
    EXPECT_EQ(parent(c), r);
    EXPECT_TRUE(contains(r, c));
    EXPECT_FALSE(contains(c, r));
    EXPECT_EQ(c.index(0), 2u * 1 + (o & 1));
    EXPECT_EQ(c.index(1), 2u * 2 + ((o >> 1) & 1));
    EXPECT_EQ(c.index(2), 2u * 3 + ((o >> 2) & 1));
  }
}

TEST(Key, MortonLessMatchesInterleavedCodeAndPutsAncestorsFirst) {
  std::mt19937 rng(7);
  std::vector<Key> keys;
  for (int n = 0; n < 2000; ++n) {
    Key k = root_key(int(rng() % 3), int(rng() % 2), int(rng() % 5));
    const int levels = int(rng() % 6);
    for (int l = 0; l < levels; ++l) k = child(k, int(rng() % 8));
    keys.push_back(k);
  }
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const Key& a = keys[i];
    const Key& b = keys[i + 1];
    const auto ca = interleave(a), cb = interleave(b);
    if (ca != cb) {
      EXPECT_EQ(morton_less(a, b), ca < cb);
    } else {
      EXPECT_EQ(morton_less(a, b), a.level < b.level);
    }
  }
  const Key r = root_key(0, 0, 0);
  EXPECT_TRUE(morton_less(r, child(r, 0)));
  EXPECT_TRUE(morton_less(child(child(r, 7), 7), root_key(1, 0, 0)));
}

TEST(Key, MortonCodesOrderAsMortonLessDoes) {
  // Root indices up to the largest grid, so the corner's top 11 bits (the second word of the
  // spread) are exercised; chains of first children share their ancestors' corners.
  std::mt19937 rng(11);
  std::vector<Key> keys;
  for (int n = 0; n < 400; ++n) {
    Key k = root_key(int(rng() % kMaxRootBlocks), int(rng() % 7), int(rng() % kMaxRootBlocks));
    keys.push_back(k);
    const int levels = int(rng() % 8);
    for (int l = 0; l < levels; ++l)
      keys.push_back(k = child(k, rng() % 3 == 0 ? 0 : int(rng() % 8)));
  }
  for (const Key& a : keys) {
    ASSERT_EQ(morton_corner(a), interleave(a));
    for (std::size_t j = 0; j < keys.size(); j += 7) {
      const Key& b = keys[j];
      ASSERT_EQ(morton_code(a) < morton_code(b), morton_less(a, b)) << a << " " << b;
      ASSERT_EQ(morton_code(a) == morton_code(b), a == b);
    }
  }
}

TEST(Key, ChildrenFollowOctantOrderOnTheCurve) {
  const Key r = root_key(2, 1, 0);
  for (int o = 0; o + 1 < 8; ++o) EXPECT_TRUE(morton_less(child(r, o), child(r, o + 1)));
  EXPECT_TRUE(morton_less(child(r, 7), last_descendant(r)) || child(r, 7) == last_descendant(r));
}

TEST(Key, FaceNeighboursAndBoundaries) {
  const RootGrid g{{3, 1, 2}};
  const Key r = root_key(0, 0, 0);
  EXPECT_FALSE(face_neighbour(r, Face::kWest, g));
  EXPECT_FALSE(face_neighbour(r, Face::kSouth, g));
  EXPECT_FALSE(face_neighbour(r, Face::kNorth, g));
  EXPECT_FALSE(face_neighbour(r, Face::kDown, g));
  EXPECT_EQ(*face_neighbour(r, Face::kEast, g), root_key(1, 0, 0));
  EXPECT_EQ(*face_neighbour(r, Face::kUp, g), root_key(0, 0, 1));
  // A level-1 block on the east side of root (0,0,0) crosses into root (1,0,0).
  const Key c = child(r, 1);
  EXPECT_EQ(*face_neighbour(c, Face::kEast, g), child(root_key(1, 0, 0), 0));
  EXPECT_EQ(*face_neighbour(c, Face::kWest, g), child(r, 0));
  EXPECT_FALSE(face_neighbour(child(root_key(2, 0, 0), 1), Face::kEast, g));
  for (const Face f : kFaces) EXPECT_EQ(opposite(opposite(f)), f);
}

// A face lies inside the parent exactly when the block across it is a sibling; roots have none.
TEST(Key, FaceInsideParentIsTheFaceToASibling) {
  const RootGrid g{{2, 2, 2}};
  int inside = 0;
  for (const Key& root : root_leaves(g)) {
    for (const Face f : kFaces) EXPECT_FALSE(face_inside_parent(root, f));
    for (int o = 0; o < 8; ++o)
      for (int o2 = 0; o2 < 8; ++o2) {
        const Key k = child(child(root, o), o2);
        for (const Face f : kFaces) {
          const auto n = face_neighbour(k, f, g);
          const bool sibling = n && parent(*n) == parent(k);
          EXPECT_EQ(face_inside_parent(k, f), sibling) << k << " face " << int(f);
          inside += sibling ? 1 : 0;
        }
      }
  }
  EXPECT_EQ(inside, 8 * 64 * 3);  // three of each leaf's six faces
}

TEST(Key, HashSeparatesLevels) {
  std::unordered_set<Key> set;
  const Key r = root_key(0, 0, 0);
  set.insert(r);
  set.insert(child(r, 0));
  EXPECT_EQ(set.size(), 2u);
  EXPECT_EQ(to_string(child(r, 3)), "L1(1,1,0)");
}

TEST(Geometry, ExtentIsTheExactRational) {
  const RootGrid g{{2, 1, 1}};
  const Key k = child(child(root_key(1, 0, 0), 3), 5);  // level 2, lattice index (7,2,1)
  const Box b = extent(k, g);
  EXPECT_EQ(b.lo[0], 7.0 / 8.0);
  EXPECT_EQ(b.hi[0], 1.0);
  EXPECT_EQ(b.lo[1], 2.0 / 4.0);
  EXPECT_EQ(b.lo[2], 1.0 / 4.0);
  EXPECT_EQ(b.hi[2], 2.0 / 4.0);
}

TEST(LeafSet, FindsSameCoarserAndFinerNeighboursByKey) {
  const RootGrid g{{2, 1, 1}};
  // Root 0 refined once, child 1 (east-bottom-south) refined again; root 1 a leaf.
  std::vector<Key> keys;
  const Key r0 = root_key(0, 0, 0);
  for (int o = 0; o < 8; ++o) {
    if (o == 1) {
      for (int p = 0; p < 8; ++p) keys.push_back(child(child(r0, 1), p));
    } else {
      keys.push_back(child(r0, o));
    }
  }
  keys.push_back(root_key(1, 0, 0));
  std::sort(keys.begin(), keys.end(), MortonLess{});
  const LeafSet leaves(keys);

  const Key fine = child(child(r0, 1), 1);  // east side of r0, level 2
  const auto east = leaves.across(fine, Face::kEast, g);
  EXPECT_EQ(east.relation, Relation::kCoarser);
  EXPECT_EQ(leaves[east.index[0]], root_key(1, 0, 0));

  const auto west = leaves.across(child(r0, 0), Face::kEast, g);
  EXPECT_EQ(west.relation, Relation::kFiner);
  EXPECT_EQ(west.count, 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(leaves[west.index[i]].level, 2);

  const auto same = leaves.across(child(r0, 0), Face::kNorth, g);
  EXPECT_EQ(same.relation, Relation::kSame);
  EXPECT_EQ(leaves[same.index[0]], child(r0, 2));

  EXPECT_EQ(leaves.across(child(r0, 0), Face::kWest, g).relation, Relation::kBoundary);
  EXPECT_TRUE(leaves.family_complete(fine));
  EXPECT_FALSE(leaves.family_complete(child(r0, 0)));  // sibling 1 is not a leaf
  EXPECT_FALSE(leaves.family_complete(root_key(1, 0, 0)));
  EXPECT_EQ(*leaves.find_covering(child(root_key(1, 0, 0), 6)), leaves.size() - 1);
}

TEST(LeafSet, SearchesFromANearIndexFindWhatWholeSearchesFind) {
  // A 2:1-free random refinement of a 3x2x2 grid, queried for every leaf's face neighbours and
  // their children and parents, from the leaf's own index, both ends, and indices off the end.
  std::mt19937 rng(5);
  const RootGrid grid{{3, 2, 2}};
  std::vector<Key> keys;
  std::function<void(const Key&)> grow = [&](const Key& k) {
    if (k.level < 4 && rng() % 3 == 0) {
      for (int o = 0; o < 8; ++o) grow(child(k, o));
    } else {
      keys.push_back(k);
    }
  };
  for (const Key& r : root_leaves(grid)) grow(r);
  const LeafSet leaves(keys);
  const std::size_t n = leaves.size();
  ASSERT_GT(n, 100u);
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<Key> queries{leaves[i]};
    for (const Face f : kFaces)
      if (const auto nb = face_neighbour(leaves[i], f, grid)) {
        queries.push_back(*nb);
        queries.push_back(child(*nb, int(rng() % 8)));
        if (nb->level > 0) queries.push_back(parent(*nb));
      }
    for (const std::size_t near : {i, std::size_t{0}, n - 1, n, n + 5, std::size_t(rng() % n)}) {
      for (const Key& q : queries) {
        ASSERT_EQ(leaves.find(q, near), leaves.find(q)) << q << " near " << near;
        ASSERT_EQ(leaves.find_covering(q, near), leaves.find_covering(q)) << q << " near " << near;
        ASSERT_EQ(leaves.range_within(q, near), leaves.range_within(q)) << q << " near " << near;
      }
      for (const Face f : kFaces) {
        const FaceLookup a = leaves.across(leaves[i], f, grid, near);
        const FaceLookup b = leaves.across(leaves[i], f, grid);
        ASSERT_EQ(a.relation, b.relation);
        ASSERT_EQ(a.count, b.count);
        ASSERT_EQ(a.index, b.index);
      }
    }
  }
}

TEST(LeafSet, FamilyCompleteAtAgreesWithTheSearch) {
  // Random refinements of a 3x2x1 grid, then every contiguous slice of the curve (a rank's
  // range, with families cut at both ends): the index rule agrees with the search.
  const RootGrid g{{3, 2, 1}};
  std::mt19937 rng(7);
  std::vector<Key> keys = root_leaves(g);
  for (int round = 0; round < 12; ++round) {
    std::vector<Key> next;
    for (const Key& k : keys) {
      if (k.level < 3 && rng() % 3 == 0) {
        for (int o = 0; o < 8; ++o) next.push_back(child(k, o));
      } else {
        next.push_back(k);
      }
    }
    std::sort(next.begin(), next.end(), MortonLess{});
    keys = next;
  }
  int complete = 0;
  for (std::size_t first = 0; first < keys.size(); first += 5) {
    for (const std::size_t last : {first + 1, first + 7, first + 9, first + 31, keys.size()}) {
      if (last > keys.size()) continue;
      const LeafSet slice(std::vector<Key>(keys.begin() + std::ptrdiff_t(first),
                                           keys.begin() + std::ptrdiff_t(last)));
      for (std::size_t i = 0; i < slice.size(); ++i) {
        ASSERT_EQ(slice.family_complete_at(i), slice.family_complete(slice[i]))
            << "leaf " << i << " of the slice from " << first << " to " << last;
        complete += slice.family_complete_at(i) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(complete, 0);
}

TEST(LeafSet, RootLeavesAreSortedForOddGrids) {
  const RootGrid g{{3, 5, 2}};
  const auto keys = root_leaves(g);
  EXPECT_EQ(keys.size(), 30u);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end(), MortonLess{}));
  const std::set<std::tuple<unsigned, unsigned, unsigned>> distinct = [&] {
    std::set<std::tuple<unsigned, unsigned, unsigned>> s;
    for (const Key& k : keys) s.insert({k.index(0), k.index(1), k.index(2)});
    return s;
  }();
  EXPECT_EQ(distinct.size(), 30u);
}
