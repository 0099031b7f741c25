// The refinement consensus across rank boundaries, on 1..4 ranks.
// (shared set-up and conventions: runtime_fixtures.hpp)
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// 2. The refinement consensus across rank boundaries

// The first violations of the closure rules R1..R4 by `marks` on a whole mesh.
std::string closure_violation(const LeafSet& leaves, std::span<const std::int8_t> marks,
                              const RootGrid& grid) {
  Problems p;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const Key& k = leaves[i];
    for (const octree::Face f : octree::kFaces) {
      const octree::FaceLookup across = leaves.across(k, f, grid);
      const std::size_t j = across.index[0];
      if (across.relation == octree::Relation::kSame && marks[i] == octree::kRefine &&
          marks[j] < octree::kStay)
        p.add("R1: " + str(leaves[j]) + " may coarsen next to refining " + str(k));
      if (across.relation == octree::Relation::kCoarser) {
        const int need = marks[i] == octree::kRefine ? octree::kRefine : octree::kStay;
        if (marks[j] < need)
          p.add("R1-R3: coarser " + str(leaves[j]) + " too low next to " + str(k));
      }
    }
    if (k.level > 0 && marks[i] >= octree::kStay) {
      const auto [first, last] = leaves.range_within(octree::parent(k));
      for (std::size_t j = first; j < last; ++j)
        if (leaves[j].level == k.level && marks[j] < octree::kStay)
          p.add("R4: sibling " + str(leaves[j]) + " of " + str(k) + " may coarsen");
    }
  }
  return p.text();
}

struct ClosureOutcome {
  std::vector<std::int8_t> reference;  // whole mesh, one rank
  int rounds = 0;                      // of the distributed closure
};

// Closes `marks` (initial marks of the whole mesh `keys`) on the whole mesh with a LocalMailbox
// and, distributed by `targets`, through StaticRuntime's mailbox in the rounds that the mesh's
// finest level bounds; checks that every rank's marks equal the reference's for its leaves.
ClosureOutcome check_distributed_closure(const RootGrid& grid, sfc::Curve curve,
                                         const std::vector<Key>& keys,
                                         const std::vector<std::int8_t>& marks,
                                         const std::vector<int>& targets, const std::string& what) {
  const int me = world_rank();
  ClosureOutcome out;
  const LeafSet whole(keys);
  out.reference = marks;
  octree::LocalMailbox local;
  octree::close_marks(whole, out.reference, grid, local);
  const std::string violation = closure_violation(whole, out.reference, grid);
  EXPECT_TRUE(violation.empty()) << what << ": reference closure: " << violation;

  // Tiny blocks: the closure looks at keys only.
  Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
  runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
  rt.mesh().changed(d);
  std::vector<std::int8_t> mine, expected;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (targets[i] != me) continue;
    mine.push_back(marks[i]);
    expected.push_back(out.reference[i]);
  }
  // The bound of the rounds from the mesh's own finest level: too few rounds for some chain of
  // raises would leave a mark below the reference.
  int finest = 0;
  for (const Key& k : keys) finest = std::max(finest, int(k.level));
  // Initial marks of the whole mesh: families split between ranks may coarsen.
  const int rounds = octree::closure_rounds(finest, true);
  out.rounds = octree::close_marks(d.leaves, mine, grid, rt.mesh().mailbox(), rounds).rounds;
  if (world_size() > 1) {
    EXPECT_EQ(out.rounds, rounds) << what;
  }
  Problems p;
  for (std::size_t i = 0; i < mine.size(); ++i)
    if (mine[i] != expected[i])
      p.add(str(d.leaves[i]) + " closed to " + std::to_string(mine[i]) + ", reference " +
            std::to_string(expected[i]));
  EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
  return out;
}

TEST(Consensus, RefinementWaveCrossesRanks) {
  const int P = world_size();
  const RootGrid grid{{4, 2, 1}};
  // Meshes refined to level 4 around one corner, near the start of the Morton curve (the wave
  // runs towards later ranks) and near its end (towards earlier ranks).
  const std::array<Key, 2> corners{
      Key{{0, 0, 0}, octree::kMaxLevel},
      octree::last_descendant(octree::root_key(3, 1, 0)),
  };
  for (const sfc::Curve curve : kCurves) {
    for (const Key& corner : corners) {
      const std::string what = curve_name(curve) + " wave from " + str(corner);
      std::vector<Key> keys = octree::root_leaves(grid);
      for (int l = 0; l < 4; ++l)
        keys = refine_where(
            keys, grid, [&](const Key& k) { return k.level == l && octree::contains(k, corner); });
      const LeafSet whole(keys);

      // The finest leaf whose refinement forces the most coarser leaves to refine.
      std::vector<std::int8_t> marks, wave;
      std::size_t wave_size = 0;
      for (std::size_t i = 0; i < keys.size(); ++i) {
        if (keys[i].level != 4) continue;
        std::vector<std::int8_t> m(keys.size(), octree::kStay);
        m[i] = octree::kRefine;
        const auto start = m;
        octree::LocalMailbox local;
        octree::close_marks(whole, m, grid, local);
        const auto n = std::size_t(std::count(m.begin(), m.end(), octree::kRefine));
        if (n > wave_size) {
          wave_size = n;
          marks = start;
          wave = m;
        }
      }
      std::set<int> levels;
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) levels.insert(keys[i].level);
      ASSERT_GE(levels.size(), 4u) << what << ": the wave must run from level 4 down to level 1";

      // Heavy weights on the refined leaves make the cut fall between them, so the wave
      // crosses rank boundaries at every opportunity.
      std::vector<std::int64_t> w(keys.size(), 1);
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) w[i] = 1000;
      const auto targets = cut_whole(keys, space_of(curve, grid), w, P);
      std::set<int> ranks_in_wave;
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (wave[i] == octree::kRefine) ranks_in_wave.insert(targets[i]);
      EXPECT_EQ(int(ranks_in_wave.size()), std::min(P, int(wave_size))) << what;

      const ClosureOutcome out = check_distributed_closure(grid, curve, keys, marks, targets, what);
      EXPECT_EQ(out.reference, wave) << what;
      // Each crossing costs a round: the wave cannot settle in one.
      if (P > 1) {
        EXPECT_GE(out.rounds, 2) << what;
      }
    }
  }
}

TEST(Consensus, RandomMeshesMatchOneRankClosure) {
  const int P = world_size();
  for (const sfc::Curve curve : kCurves) {
    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const RootGrid grid{{int(1 + seed % 3), 2, int(1 + seed % 2)}};
      const std::vector<Key> keys = random_mesh(grid, 3, 45, seed);
      // Mostly coarsen, so R2-R4 matter as much as R1; initial_marks on the whole mesh lets
      // every complete family coarsen wherever its leaves lie.
      const auto marks = octree::initial_marks(LeafSet(keys), 3, [seed](const Key& k) {
        const auto h = key_hash(k, 100 + seed) % 20;
        return h < 2 ? 1 : h < 5 ? 0 : -1;
      });
      const auto targets =
          cut_whole(keys, space_of(curve, grid), random_weights(keys.size(), 20, 200 + seed), P);
      check_distributed_closure(grid, curve, keys, marks, targets,
                                curve_name(curve) + " seed " + std::to_string(seed));
    }
  }
}

// Whether two leaves share part of a face (any levels).
bool share_a_face(const Key& a, const Key& b) {
  int contacts = 0;
  for (std::size_t d = 0; d < 3; ++d) {
    const std::uint64_t a0 = a.x[d], a1 = a0 + octree::side(a.level);
    const std::uint64_t b0 = b.x[d], b1 = b0 + octree::side(b.level);
    if (a1 == b0 || b1 == a0)
      ++contacts;
    else if (a1 <= b0 || b1 <= a0)
      return false;
  }
  return contacts == 1;
}

TEST(Consensus, MarksGoOnlyToRanksWithLeavesAlongTheFacesOrInTheFamily) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{4, 2, 1}};
  for (const sfc::Curve curve : kCurves) {
    const std::vector<Key> keys = random_mesh(grid, 3, 40, 7);
    // From 3 ranks on, rank 1 holds nothing although it lies between its neighbours' ranges.
    std::vector<int> targets = cut_whole(
        keys, space_of(curve, grid), std::vector<std::int64_t>(keys.size(), 1), std::max(1, P - 1));
    if (P >= 3)
      for (int& t : targets) t += t >= 1 ? 1 : 0;
    else if (P == 2)
      targets =
          cut_whole(keys, space_of(curve, grid), std::vector<std::int64_t>(keys.size(), 1), 2);
    std::set<int> expected;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (targets[i] != me) continue;
      for (std::size_t j = 0; j < keys.size(); ++j) {
        if (targets[j] == me) continue;
        const bool siblings = keys[i].level > 0 && keys[j].level == keys[i].level &&
                              octree::parent(keys[j]) == octree::parent(keys[i]);
        if (siblings || share_a_face(keys[i], keys[j])) expected.insert(targets[j]);
      }
    }
    Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    rt.mesh().changed(d);
    const auto peers = dynamic_cast<mesh::MpiMailbox&>(rt.mesh().mailbox()).peers();
    const std::vector<int> want(expected.begin(), expected.end());
    EXPECT_EQ(peers, want) << curve_name(curve) << " on rank " << me;
    if (P >= 3) {
      EXPECT_EQ(std::count(peers.begin(), peers.end(), 1), 0) << "rank 1 holds no leaf";
    }
  }
}

// A leaf that posts_from rules out posts nothing, whatever its mark: the closure skips looking it
// up in the neighbourhood. Most leaves of a rank lie inside its part of the mesh and are ruled
// out.
TEST(Consensus, LeavesInsideARanksPartPostNothing) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{4, 4, 2}};
  for (const sfc::Curve curve : kCurves) {
    const std::vector<Key> keys = random_mesh(grid, 3, 40, 11);  // about 800 leaves
    const auto targets =
        cut_whole(keys, space_of(curve, grid), std::vector<std::int64_t>(keys.size(), 1), P);
    Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    rt.mesh().changed(d);
    octree::MarkMailbox& mailbox = rt.mesh().mailbox();
    std::size_t inside = 0;
    Problems p;
    for (std::size_t i = 0; i < d.leaves.size(); ++i) {
      if (mailbox.posts_from(i)) continue;
      ++inside;
      for (const std::int8_t mark : {octree::kCoarsen, octree::kStay, octree::kRefine}) {
        const octree::MarkChange change{d.leaves[i], mark};
        int posted = mailbox.post_family(change);
        for (const octree::Face f : octree::kFaces) posted += mailbox.post_across(f, change);
        if (posted != 0) p.add(str(d.leaves[i]) + " posted " + std::to_string(posted));
      }
    }
    mailbox.discard();
    EXPECT_TRUE(all_ranks(p.none(), p.text())) << curve_name(curve);
    if (P > 1) {
      EXPECT_GT(inside, d.leaves.size() / 4) << curve_name(curve) << " on rank " << me;
    }
  }
}

}  // namespace
