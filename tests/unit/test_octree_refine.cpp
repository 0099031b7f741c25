#include <algorithm>
#include <barrier>
#include <mutex>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"
#include "octree/refine.hpp"

using namespace miniamr::octree;

namespace {

const RootGrid kGrid{{2, 1, 1}};

// Root 0 refined to level 2 everywhere, root 1 to level 1.
LeafSet two_level_mesh() {
  std::vector<Key> keys;
  for (int a = 0; a < 8; ++a)
    for (int b = 0; b < 8; ++b) keys.push_back(child(child(root_key(0, 0, 0), a), b));
  for (int a = 0; a < 8; ++a) keys.push_back(child(root_key(1, 0, 0), a));
  std::sort(keys.begin(), keys.end(), MortonLess{});
  return LeafSet(keys);
}

std::vector<std::int8_t> close(const LeafSet& leaves, const std::function<int(const Key&)>& f,
                               int max_level = 4) {
  auto marks = initial_marks(leaves, max_level, f);
  LocalMailbox mailbox;
  close_marks(leaves, marks, kGrid, mailbox);
  return marks;
}

std::int8_t mark_of(const LeafSet& leaves, std::span<const std::int8_t> marks, const Key& k) {
  return marks[*leaves.find(k)];
}

bool on_east_face_of_root0(const Key& k) {
  return k.level == 2 && k.index(0) == 3;  // level-2 lattice x index 3 touches root 1
}

// Faces touch when the boxes meet in one axis and overlap with positive area in the others.
bool face_adjacent(const Key& a, const Key& b) {
  int touching = 0, overlapping = 0;
  for (int d = 0; d < 3; ++d) {
    const std::uint64_t alo = a.x[d], ahi = alo + side(a.level);
    const std::uint64_t blo = b.x[d], bhi = blo + side(b.level);
    if (ahi == blo || bhi == alo) {
      ++touching;
    } else if (alo < bhi && blo < ahi) {
      ++overlapping;
    }
  }
  return touching == 1 && overlapping == 2;
}

// The rules written the obvious way: sweep every pair until nothing changes.
std::vector<std::int8_t> brute_force_closure(const LeafSet& leaves,
                                             std::vector<std::int8_t> marks) {
  bool changed = true;
  auto raise = [&](std::size_t i, std::int8_t m) {
    if (marks[i] < m) {
      marks[i] = m;
      changed = true;
    }
  };
  while (changed) {
    changed = false;
    for (std::size_t i = 0; i < leaves.size(); ++i) {
      for (std::size_t j = 0; j < leaves.size(); ++j) {
        if (i == j) continue;
        const Key& a = leaves[i];
        const Key& b = leaves[j];
        if (face_adjacent(a, b)) {
          if (b.level == a.level && marks[i] == kRefine) raise(j, kStay);
          if (b.level + 1 == a.level) raise(j, marks[i] == kRefine ? kRefine : kStay);
        }
        if (a.level > 0 && b.level == a.level && parent(a) == parent(b) && marks[i] >= kStay)
          raise(j, kStay);
      }
    }
  }
  return marks;
}

bool balanced(const LeafSet& leaves) {
  for (std::size_t i = 0; i < leaves.size(); ++i)
    for (std::size_t j = 0; j < leaves.size(); ++j)
      if (face_adjacent(leaves[i], leaves[j]) && std::abs(leaves[i].level - leaves[j].level) > 1)
        return false;
  return true;
}

}  // namespace

TEST(InitialMarks, CapsAtMaxLevelAndKeepsIncompleteFamilies) {
  const LeafSet leaves = two_level_mesh();
  const auto marks = initial_marks(leaves, 2, [](const Key&) { return 1; });
  for (std::size_t i = 0; i < leaves.size(); ++i)
    EXPECT_EQ(marks[i], leaves[i].level == 2 ? kStay : kRefine);
  const LeafSet roots(root_leaves(kGrid));
  const auto root_marks = initial_marks(roots, 4, [](const Key&) { return -1; });
  for (auto m : root_marks) EXPECT_EQ(m, kStay);  // level 0 never coarsens
}

TEST(InitialMarks, APartFamilyCoarsensOnlyWhenSaidCompleteAcrossRanks) {
  // Four of root 0's children here, the other four on another rank: not a family here.
  const Key root = root_key(0, 0, 0);
  std::vector<Key> part;
  for (int o = 0; o < 4; ++o) part.push_back(child(root, o));
  const LeafSet leaves(part);
  const auto coarsen = [](const Key&) { return -1; };
  for (auto m : initial_marks(leaves, 3, coarsen)) EXPECT_EQ(m, kStay);
  // Said complete across ranks (Mesh::split_families): they may coarsen, the closure decides.
  const std::vector<std::uint8_t> across{1, 1, 0, 1};
  const auto marks = initial_marks(leaves, 3, coarsen, across);
  EXPECT_EQ(marks, (std::vector<std::int8_t>{kCoarsen, kCoarsen, kStay, kCoarsen}));
}

TEST(Closure, RaisedAcrossIsTheFaceRulesForEveryLevelAndMark) {
  // The one statement of R1-R3 that the closure applies and the mailbox posts by.
  const std::optional<std::int8_t> none;
  for (const std::int8_t m : {std::int8_t(kCoarsen), std::int8_t(kStay), std::int8_t(kRefine)}) {
    const bool refine = m == kRefine;
    EXPECT_EQ(raised_across(2, m, 1), std::optional<std::int8_t>(refine ? kRefine : kStay));
    EXPECT_EQ(raised_across(2, m, 2), refine ? std::optional<std::int8_t>(kStay) : none);
    EXPECT_EQ(raised_across(2, m, 3), none);
  }
}

TEST(Closure, R1RefineForcesCoarserNeighbourToRefine) {
  const LeafSet leaves = two_level_mesh();
  const Key trigger = child(child(root_key(0, 0, 0), 1), 1);  // east face, bottom corner
  const auto marks = close(leaves, [&](const Key& k) { return k == trigger ? 1 : -1; });
  EXPECT_EQ(mark_of(leaves, marks, trigger), kRefine);
  EXPECT_EQ(mark_of(leaves, marks, child(root_key(1, 0, 0), 0)), kRefine);
  // R4 on root 1's family: the other seven children must stay.
  for (int o = 1; o < 8; ++o) EXPECT_EQ(mark_of(leaves, marks, child(root_key(1, 0, 0), o)), kStay);
}

TEST(Closure, R1RefineMakesSameLevelNeighboursStay) {
  const LeafSet leaves(root_leaves(RootGrid{{3, 1, 1}}));
  std::vector<std::int8_t> marks{kCoarsen, kRefine, kCoarsen};  // as if level > 0 could coarsen
  LocalMailbox mailbox;
  close_marks(leaves, marks, RootGrid{{3, 1, 1}}, mailbox);
  EXPECT_EQ(marks, (std::vector<std::int8_t>{kStay, kRefine, kStay}));
}

TEST(Closure, R2NoCoarseningNextToFiner) {
  const LeafSet leaves = two_level_mesh();
  const auto marks = close(leaves, [](const Key&) { return -1; });
  // Root 1's west children touch level-2 leaves, so the whole family stays (R2 then R4) ...
  for (int o = 0; o < 8; ++o) EXPECT_EQ(mark_of(leaves, marks, child(root_key(1, 0, 0), o)), kStay);
  // ... while root 0's level-2 families are free to coarsen.
  for (std::size_t i = 0; i < leaves.size(); ++i)
    if (leaves[i].level == 2) {
      EXPECT_EQ(marks[i], kCoarsen);
    }
}

TEST(Closure, R3StayingLeafKeepsCoarserNeighbour) {
  // Root 0 at level 1 with child 1 refined; root 1 a leaf at level 0 that could only coarsen
  // if it were not level 0, so use a 4x1x1 grid refined once everywhere instead.
  std::vector<Key> keys;
  for (int r = 0; r < 2; ++r)
    for (int o = 0; o < 8; ++o) {
      const Key c = child(root_key(r, 0, 0), o);
      if (r == 0 && (o & 1)) {
        for (int p = 0; p < 8; ++p) keys.push_back(child(c, p));
      } else {
        keys.push_back(c);
      }
    }
  std::sort(keys.begin(), keys.end(), MortonLess{});
  const LeafSet leaves(keys);
  // Level-2 leaves of root 0's east children stay (callback 0); nothing else wants anything.
  auto marks =
      initial_marks(leaves, 4, [](const Key& k) { return on_east_face_of_root0(k) ? 0 : -1; });
  LocalMailbox mailbox;
  close_marks(leaves, marks, kGrid, mailbox);
  // Root 1's west children are coarser neighbours of staying leaves: they stay (R3).
  for (int o : {0, 2, 4, 6}) EXPECT_EQ(mark_of(leaves, marks, child(root_key(1, 0, 0), o)), kStay);
  EXPECT_EQ(marks, brute_force_closure(leaves, initial_marks(leaves, 4, [](const Key& k) {
                                         return on_east_face_of_root0(k) ? 0 : -1;
                                       })));
}

TEST(Closure, R4FamilyCoarsensOnlyWhenAllEightAgree) {
  const LeafSet leaves = two_level_mesh();
  const Key keeper = child(child(root_key(0, 0, 0), 0), 0);
  const auto marks = close(leaves, [&](const Key& k) { return k == keeper ? 0 : -1; });
  for (int p = 0; p < 8; ++p)
    EXPECT_EQ(mark_of(leaves, marks, child(child(root_key(0, 0, 0), 0), p)), kStay);
  const auto plan = plan_adapt(leaves, marks);
  // Families 1..7 of root 0 merge; family 0 and root 1's children stay.
  EXPECT_EQ(plan.merges, 7);
  EXPECT_EQ(plan.splits, 0);
  EXPECT_EQ(plan.keys.size(), 8u + 7u + 8u);
  EXPECT_TRUE(std::is_sorted(plan.keys.begin(), plan.keys.end(), MortonLess{}));
}

TEST(Closure, MatchesBruteForceOnRandomMeshesAndKeepsBalance) {
  std::mt19937 rng(12345);
  const RootGrid grid{{3, 2, 1}};
  for (int trial = 0; trial < 6; ++trial) {
    LeafSet leaves(root_leaves(grid));
    for (int it = 0; it < 6; ++it) {
      const auto want = [&](const Key&) { return int(rng() % 3) - 1; };
      std::vector<int> wanted(leaves.size());
      for (auto& w : wanted) w = want(Key{});
      std::size_t n = 0;
      auto marks = initial_marks(leaves, 3, [&](const Key&) { return wanted[n++]; });
      const auto expected = brute_force_closure(leaves, marks);
      LocalMailbox mailbox;
      close_marks(leaves, marks, grid, mailbox);
      ASSERT_EQ(marks, expected) << "trial " << trial << " iteration " << it;
      leaves = LeafSet(plan_adapt(leaves, marks).keys);
      ASSERT_TRUE(balanced(leaves));
    }
  }
}

// Ranks as threads of one process: a whole mesh's leaves dealt out by `owner`, the rounds of
// the consensus kept in step by a barrier. Posts follow the rules of the MPI mailbox: a change
// goes to the owner of the leaf across a face that it can raise, and of its leaf siblings.
struct ThreadRounds {
  const LeafSet& whole;
  const std::vector<int>& owner;
  const RootGrid& grid;
  std::barrier<> sync;
  std::mutex mutex;
  std::vector<std::vector<MarkChange>> next;  // per rank: what arrives at the end of the round
};

class ThreadMailbox final : public MarkMailbox {
 public:
  ThreadMailbox(ThreadRounds& rounds, int me) : r_(rounds), me_(me) {}
  bool distributed() const override { return true; }
  int post_across(Face f, const MarkChange& c) override {
    const FaceLookup across = r_.whole.across(c.key, f, r_.grid);
    if (across.relation == Relation::kCoarser ||
        (across.relation == Relation::kSame && c.mark == kRefine))
      return post_to(across.index[0], c);
    return 0;
  }
  int post_family(const MarkChange& c) override {
    int posted = 0;
    const auto [first, last] = r_.whole.range_within(parent(c.key));
    for (std::size_t j = first; j < last; ++j)
      if (r_.whole[j].level == c.key.level) posted += post_to(j, c);
    return posted;
  }
  std::vector<MarkChange> exchange() override {
    {
      const std::lock_guard lock(r_.mutex);
      for (const auto& [rank, c] : out_) r_.next[std::size_t(rank)].push_back(c);
    }
    out_.clear();
    r_.sync.arrive_and_wait();
    std::vector<MarkChange> in = std::move(r_.next[std::size_t(me_)]);
    r_.next[std::size_t(me_)].clear();
    r_.sync.arrive_and_wait();
    return in;
  }
  void discard() override { out_.clear(); }

 private:
  int post_to(std::size_t j, const MarkChange& c) {
    if (r_.owner[j] == me_) return 0;
    out_.emplace_back(r_.owner[j], c);
    return 1;
  }
  ThreadRounds& r_;
  int me_;
  std::vector<std::pair<int, MarkChange>> out_;
};

// The closure's bound on its rounds (closure_rounds) against the adversary of leaves dealt to
// ranks at random, so that every raise may cross ranks: each rank's marks after the bounded
// rounds must equal the closure of the whole mesh on one rank. Twice: with initial marks of the
// whole mesh (families split between ranks may coarsen), and as each rank's initial_marks make
// them (a split family stays).
TEST(Closure, BoundedRoundsReachTheFixedPointWhereverLeavesLie) {
  std::mt19937 rng(2026);
  const RootGrid grid{{3, 2, 1}};
  constexpr int kMax = 4, P = 3;
  for (int trial = 0; trial < 120; ++trial) {
    const bool split_families_may_coarsen = trial % 2 == 0;
    // A 2:1 mesh of levels 0..kMax from random closed refinements.
    LeafSet whole(root_leaves(grid));
    for (int it = 0; it < kMax; ++it) {
      auto marks = initial_marks(whole, kMax, [&](const Key&) { return rng() % 3 == 0 ? 1 : 0; });
      LocalMailbox local;
      close_marks(whole, marks, grid, local);
      whole = LeafSet(plan_adapt(whole, marks).keys);
    }
    int finest = 0;
    for (const Key& k : whole.keys()) finest = std::max(finest, int(k.level));
    std::vector<int> owner(whole.size());
    for (int& o : owner) o = int(rng() % P);
    // Few raises, and those on the finest leaves (the coarser can only refine, as they must in
    // front of a wave of refinement running down the levels): the longest chains.
    auto start = initial_marks(whole, kMax + 1, [&](const Key& k) {
      const auto h = rng() % 32;
      return h == 0 && k.level == finest ? 1 : h == 1 ? 0 : -1;
    });
    if (!split_families_may_coarsen)
      for (std::size_t i = 0; i < whole.size(); ++i) {
        if (start[i] != kCoarsen) continue;
        const auto [first, last] = whole.range_within(parent(whole[i]));
        for (std::size_t j = first; j < last; ++j)
          if (owner[j] != owner[i]) start[i] = kStay;
      }
    auto expected = start;
    LocalMailbox local;
    close_marks(whole, expected, grid, local);

    ThreadRounds shared{
        whole, owner, grid, std::barrier<>(P), {}, std::vector<std::vector<MarkChange>>(P)};
    std::vector<std::vector<std::int8_t>> closed(P);
    std::vector<std::thread> ranks;
    const int rounds = closure_rounds(finest, split_families_may_coarsen);
    for (int me = 0; me < P; ++me)
      ranks.emplace_back([&, me] {
        std::vector<Key> keys;
        for (std::size_t i = 0; i < whole.size(); ++i)
          if (owner[i] == me) keys.push_back(whole[i]), closed[std::size_t(me)].push_back(start[i]);
        ThreadMailbox mailbox(shared, me);
        const ClosureStats stats =
            close_marks(LeafSet(keys), closed[std::size_t(me)], grid, mailbox, rounds);
        EXPECT_EQ(stats.rounds, rounds);
      });
    for (auto& t : ranks) t.join();
    std::vector<std::size_t> next(P, 0);
    for (std::size_t i = 0; i < whole.size(); ++i) {
      const auto me = std::size_t(owner[i]);
      ASSERT_EQ(int(closed[me][next[me]++]), int(expected[i]))
          << "trial " << trial << ": leaf " << int(whole[i].level) << " of rank " << me
          << (split_families_may_coarsen ? ", whole-mesh marks" : ", each rank's marks");
    }
  }
}

TEST(Adapt, SplitProducesChildrenInCurveOrderWithOrigins) {
  const LeafSet leaves(root_leaves(kGrid));
  const std::vector<std::int8_t> marks{kRefine, kStay};
  const auto plan = plan_adapt(leaves, marks);
  ASSERT_EQ(plan.keys.size(), 9u);
  for (int o = 0; o < 8; ++o) {
    EXPECT_EQ(plan.keys[std::size_t(o)], child(root_key(0, 0, 0), o));
    EXPECT_EQ(plan.origin[std::size_t(o)].kind, Origin::kSplit);
    EXPECT_EQ(plan.origin[std::size_t(o)].octant, o);
  }
  EXPECT_EQ(plan.origin[8].kind, Origin::kKept);
  EXPECT_EQ(plan.origin[8].old_index, 1u);
}

// What a refinement step's cut weighs a leaf by: the leaves the marks alone make of it.
TEST(LeavesAfter, CountsTheLeavesTheMarksMakeWithinTheIterationsAndLevels) {
  const Key root = root_key(0, 0, 0);
  const auto everywhere = [](const Key&) { return 1; };
  EXPECT_EQ(leaves_after(root, 0, 4, everywhere), 1);
  EXPECT_EQ(leaves_after(root, 2, 4, everywhere), 64);
  EXPECT_EQ(leaves_after(root, 3, 2, everywhere), 64);  // no deeper than level 2
  EXPECT_EQ(leaves_after(child(root, 3), 3, 2, everywhere), 8);
  // Refining only along a path of first octants: each level adds 7 leaves.
  const auto corner = [](const Key& k) {
    return k.x[0] == 0 && k.x[1] == 0 && k.x[2] == 0 ? 1 : -1;
  };
  EXPECT_EQ(leaves_after(root, 3, 4, corner), 1 + 7 * 3);
  EXPECT_EQ(leaves_after(child(root, 1), 3, 4, corner), 1);
}

// The closure only adds to what the marks make: iterating the marks, closure and adaptation
// makes those leaves where it adds nothing, and more where it does.
TEST(LeavesAfter, IsWhatIteratedAdaptationMakesWhereTheClosureAddsNothing) {
  const auto iterate = [](const std::function<int(const Key&)>& wanted, int iterations) {
    LeafSet leaves(std::vector<Key>{root_key(0, 0, 0), root_key(1, 0, 0)});
    for (int it = 0; it < iterations; ++it)
      leaves = LeafSet(plan_adapt(leaves, close(leaves, wanted, 3)).keys);
    return std::int64_t(leaves.size());
  };
  const Key root = root_key(0, 0, 0);
  const auto everywhere = [](const Key&) { return 1; };
  EXPECT_EQ(iterate(everywhere, 2), 2 * leaves_after(root, 2, 3, everywhere));
  // A path of first octants in root 0 stays 2:1 with root 1; a path of second octants (towards
  // root 1) brings level-3 leaves against it, and the closure refines root 1.
  for (const int octant : {0, 1}) {
    const Key path[3] = {root, child(root, octant), child(child(root, octant), octant)};
    const auto along = [&](const Key& k) { return std::ranges::count(path, k) > 0 ? 1 : -1; };
    const std::int64_t marked = leaves_after(root, 3, 3, along) + 1;
    EXPECT_EQ(marked, 2 + 7 * 3);
    if (octant == 0)
      EXPECT_EQ(iterate(along, 3), marked);
    else
      EXPECT_GT(iterate(along, 3), marked);
  }
}
