// The MPI runtimes on 1..4 ranks: migration, family gathering, empty ranks and rebalancing.
// (shared set-up and conventions: runtime_fixtures.hpp)
#include "mesh/adapt.hpp"
#include "runtime_fixtures.hpp"
#include "stencil/split_coarsen.hpp"

namespace {

using namespace runtime_test;

// ---------------------------------------------------------------------------------------------
// 1. Migration

TEST(Migration, CarriesMarksCostsAndEveryBitOfTheStorage) {
  // Every block moves one rank on. Unequal extents catch a row/plane mix-up; special values
  // (in ghosts too: the whole storage travels) catch any arithmetic on the way.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 1}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const BlockShape shape{4, 6, 2, 3};
  const auto home = even_cut(keys, grid);
  comm::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  const auto mark_of = [](const Key& k) { return std::int8_t(int(key_hash(k, 5) % 3) - 1); };
  const auto cost_of = [](const Key& k) { return 0.1234567890123 * double(key_hash(k, 7) % 97); };
  const auto special = [](Block& b) {
    const BlockShape& s = b.shape();
    b.var(1)[s.at(1, 1, 1)] = -0.0;
    b.var(2)[s.at(4, 6, 2)] = std::numeric_limits<double>::denorm_min();
    b.var(0)[s.at(0, 3, 1)] = std::bit_cast<double>(0x7ff8dead0000beefull);  // NaN, in a ghost
  };
  std::vector<std::int8_t> marks;
  std::vector<int> targets;
  for (std::size_t i = 0; i < d.blocks.size(); ++i) {
    special(d.blocks[i]);
    d.cost[i] = cost_of(d.leaves[i]);
    marks.push_back(mark_of(d.leaves[i]));
    targets.push_back((me + 1) % P);
  }
  mesh::migrate(d, targets, comm, &marks);

  Problems p;
  if (marks.size() != d.leaves.size()) p.add("marks do not match the leaves");
  for (std::size_t i = 0; p.none() && i < d.blocks.size(); ++i) {
    const Key& k = d.leaves[i];
    Block expected = initial_block(k, shape);
    special(expected);
    if (!std::ranges::equal(d.blocks[i].var(0), expected.var(0), [](double a, double b) {
          return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
        }))
      p.add(str(k) + " variable 0 differs bitwise");
    if (const auto diff = first_difference(d.blocks[i], expected, /*interior_only=*/true))
      p.add(str(k) + " " + *diff);
    if (std::bit_cast<std::uint64_t>(d.cost[i]) != std::bit_cast<std::uint64_t>(cost_of(k)))
      p.add(str(k) + " cost changed");
    if (marks[i] != mark_of(k)) p.add(str(k) + " mark changed");
  }
  EXPECT_TRUE(all_ranks(p.none(), p.text()));
}

// Moves every block of `d` to `target(key)` and checks what each rank then holds.
void migrate_and_check(Domain& d, const comm::Communicator& comm,
                       const std::function<int(const Key&)>& target,
                       const std::vector<Key>& all_keys, const std::string& what,
                       std::size_t message_bytes = mesh::kMigrationMessageBytes) {
  std::vector<int> targets;
  std::int64_t leaving = 0;
  std::map<int, std::int64_t> per_peer;
  for (const Key& k : d.leaves.keys()) {
    targets.push_back(target(k));
    if (targets.back() != comm.rank()) ++leaving, ++per_peer[targets.back()];
  }
  // One header message per peer, then its blocks in messages of as many as message_bytes holds
  // (at least one).
  const std::int64_t per_message =
      std::max<std::int64_t>(1, std::int64_t(message_bytes / (d.shape.doubles() * sizeof(double))));
  std::int64_t messages = 0;
  for (const auto& [peer, n] : per_peer) messages += 1 + (n + per_message - 1) / per_message;
  const std::int64_t before = comm.traffic().messages;
  const std::int64_t sent = mesh::migrate(d, targets, comm, nullptr, message_bytes);
  const std::int64_t posted = comm.traffic().messages - before;
  EXPECT_TRUE(all_ranks(posted == messages, what + ": " + std::to_string(posted) +
                                                " messages sent, expected " +
                                                std::to_string(messages)))
      << what;
  std::vector<Key> expected;
  for (const Key& k : all_keys)
    if (target(k) == comm.rank()) expected.push_back(k);
  EXPECT_TRUE(all_ranks(sent == leaving, what + ": migrate reported " + std::to_string(sent) +
                                             " blocks sent, expected " + std::to_string(leaving)))
      << what;
  const std::string problems = check_holdings(d, expected);
  EXPECT_TRUE(all_ranks(problems.empty(), what + ": " + problems)) << what;
  EXPECT_EQ(world_sum(std::int64_t(d.leaves.size())), std::int64_t(all_keys.size())) << what;
}

TEST(Migration, RoundTripThroughAnotherCutRestoresEveryBlock) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{4, 2, 1}};
  // Roots refined once, then some level-2 leaves, so keys of several levels travel.
  std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  keys = refine_where(keys, grid, [](const Key& k) { return key_hash(k, 3) % 4 == 0; });
  const BlockShape shape{4, 4, 4, 2};
  const auto space = space_of(sfc::Curve::kMorton, grid);

  const auto home = cut_whole(keys, space, std::vector<std::int64_t>(keys.size(), 1), P);
  const auto away = cut_whole(keys, space, random_weights(keys.size(), 9, 11), P);
  if (P > 1) {
    ASSERT_NE(home, away) << "the second cut must move blocks";
  }
  auto target_in = [&keys](const std::vector<int>& t) {
    return [&keys, &t](const Key& k) { return t[index_of(keys, k)]; };
  };

  comm::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  const Domain before = d;
  migrate_and_check(d, comm, target_in(away), keys, "to the weighted cut");
  migrate_and_check(d, comm, target_in(home), keys, "back home");

  // Bitwise the blocks from before the round trip (interior: ghosts are not sent).
  Problems p;
  if (!std::ranges::equal(d.leaves.keys(), before.leaves.keys())) p.add("keys changed");
  for (std::size_t i = 0; p.none() && i < d.blocks.size(); ++i) {
    if (const auto diff = first_difference(d.blocks[i], before.blocks[i], true))
      p.add(str(d.leaves[i]) + " " + *diff);
    if (d.cost[i] != before.cost[i]) p.add(str(d.leaves[i]) + " cost changed");
  }
  EXPECT_TRUE(all_ranks(p.none(), p.text()));
}

TEST(Migration, ScatteredTargetsArriveSorted) {
  // migrate() must merge arrivals into curve order whatever the targets: scatter the blocks by
  // a hash of their keys (ranges interleave), gather them back, pile them on the last rank
  // (all others empty) and send them home again.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{2, 2, 2}};
  const std::vector<Key> keys = random_mesh(grid, 2, 40, 5);
  const BlockShape shape{2, 4, 6, 1};
  const auto home = even_cut(keys, grid);
  auto go_home = [&](const Key& k) { return home[index_of(keys, k)]; };

  comm::Communicator comm(MPI_COMM_WORLD);
  Domain d = make_domain(grid, shape, share(keys, home, me));
  migrate_and_check(
      d, comm, [P](const Key& k) { return int(key_hash(k, 23) % std::uint64_t(P)); }, keys,
      "scattered");
  migrate_and_check(d, comm, go_home, keys, "gathered");
  migrate_and_check(
      d, comm, [P](const Key&) { return P - 1; }, keys, "all to the last rank");
  migrate_and_check(d, comm, go_home, keys, "back from the last rank");
  // Each peer's blocks in messages of three blocks (and one of fewer), still in header order,
  // and with a limit below one block, one block a message.
  const std::size_t three = 3 * shape.doubles() * sizeof(double);
  migrate_and_check(
      d, comm, [P](const Key&) { return P - 1; }, keys, "three blocks a message", three);
  migrate_and_check(d, comm, go_home, keys, "home three blocks a message", three);
  migrate_and_check(
      d, comm, [P](const Key& k) { return int(key_hash(k, 29) % std::uint64_t(P)); }, keys,
      "scattered three blocks a message", three);
  migrate_and_check(d, comm, go_home, keys, "home one block a message", 1);
}

// ---------------------------------------------------------------------------------------------
// 3. Families split over ranks

// Checks the ranks' holdings after a gather: the whole mesh in curve order, every complete
// family on one rank where initial_marks lets it coarsen, and the data with its keys.
void check_gathered(const Domain& d, const std::vector<Key>& keys, const sfc::CurveSpace& space,
                    const std::string& what) {
  const auto per_rank = allgather_keys(d.leaves.keys());
  EXPECT_EQ(partition_problems(per_rank, keys, space), "") << what;
  const auto families = complete_families(keys);
  for (const Key& first : families) {
    int holders = 0;
    for (const auto& r : per_rank)
      if (std::ranges::any_of(r, [&](const Key& k) {
            return k.level == first.level && octree::parent(k) == octree::parent(first);
          }))
        ++holders;
    EXPECT_EQ(holders, 1) << what << ": the family of " << str(first) << " is still split";
  }
  const auto marks =
      octree::initial_marks(d.leaves, octree::kMaxLevel, [](const Key&) { return -1; });
  EXPECT_EQ(world_sum(std::count(marks.begin(), marks.end(), octree::kCoarsen)),
            std::int64_t(8 * families.size()))
      << what << ": leaves marked coarsen";
  const std::string data = check_holdings(d, keys_of(d));
  EXPECT_TRUE(all_ranks(data.empty(), what + ": " + data)) << what;
}

// Distributes `keys` by `bounds` (along the curve), gathers families and checks the result; a
// second gather finds nothing left to move.
void check_gather(const RootGrid& grid, sfc::Curve curve, const std::vector<Key>& keys,
                  std::span<const std::size_t> bounds, const std::string& what) {
  const auto space = space_of(curve, grid);
  Domain d = make_domain(grid, BlockShape{2, 2, 2, 1},
                         share(keys, targets_from_bounds(keys, space, bounds), world_rank()));
  runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
  rt.mesh().changed(d);
  rt.mesh().gather_families(d);
  check_gathered(d, keys, space, what + " (first gather)");

  const std::vector<Key> before = keys_of(d);
  rt.mesh().gather_families(d);
  check_gathered(d, keys, space, what + " (second gather)");
  Problems p;
  for (const Key& k : before)
    if (!d.leaves.find(k)) p.add(str(k) + " moved again");
  EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
}

// Every cut of n leaves into P contiguous ranges when there are at most `max_count`, else a
// deterministic sample of them.
std::vector<std::vector<std::size_t>> distributions(std::size_t n, int P, std::size_t max_count,
                                                    std::uint64_t seed) {
  std::vector<std::vector<std::size_t>> out;
  std::vector<std::size_t> b(std::size_t(P) + 1, 0);
  b.back() = n;
  // There are C(n + P - 1, P - 1) of them.
  double count = 1;
  for (int j = 1; j < P; ++j) count = count * double(n + std::size_t(j)) / j;
  if (count > double(max_count)) {
    Rng rng(seed);
    for (std::size_t i = 0; i < max_count; ++i) {
      for (std::size_t r = 1; r + 1 < b.size(); ++r)
        b[r] = std::size_t(rng.below(std::int64_t(n) + 1));
      std::sort(b.begin() + 1, b.end() - 1);
      out.push_back(b);
    }
    return out;
  }
  std::function<void(std::size_t, std::size_t)> rec = [&](std::size_t r, std::size_t lo) {
    if (r + 1 == b.size()) {
      out.push_back(b);
      return;
    }
    for (std::size_t v = lo; v <= n; ++v) {
      b[r] = v;
      rec(r + 1, v);
    }
  };
  rec(1, 0);
  return out;
}

TEST(GatherFamilies, CompleteFamilySplitOverRanksEndsWhole) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  // The 8 children of root 0, then root 1: 9 leaves.
  const std::vector<Key> keys =
      refine_where(octree::root_leaves(grid), grid, [](const Key& k) { return k.index(0) == 0; });
  ASSERT_EQ(keys.size(), 9u);
  for (const sfc::Curve curve : kCurves) {
    // Every cut of the 9 leaves into P ranges: the family over up to 4 ranks, with empty ranks
    // between, before and after.
    for (const auto& b : distributions(keys.size(), P, 120, 1))
      check_gather(grid, curve, keys, b, curve_name(curve) + " " + bounds_text(b));

    // Once gathered, the family coarsens through the distributed closure and plan.
    if (P >= 2) {
      std::vector<std::size_t> b(std::size_t(P) + 1, keys.size());
      b[0] = 0;
      b[1] = 3;  // 3 children | 5 children and root 1 | empty ranks
      const auto space = space_of(curve, grid);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1},
                             share(keys, targets_from_bounds(keys, space, b), world_rank()));
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
      rt.mesh().changed(d);
      EXPECT_EQ(world_sum(rt.mesh().gather_families(d)), 5) << curve_name(curve);
      auto marks = octree::initial_marks(d.leaves, 3, [](const Key&) { return -1; });
      octree::close_marks(d.leaves, marks, grid, rt.mesh().mailbox(),
                          octree::closure_rounds(3, false));
      EXPECT_EQ(world_sum(octree::plan_adapt(d.leaves, marks).merges), 1) << curve_name(curve);
    }
  }
}

// Whether a family is split between ranks rides on the neighbourhood's exchange, and a mesh
// whose families are each on one rank needs no gathering (no exchange of runs, no vote). Two
// roots refined once: 16 leaves of level 1, every cut of them into P ranges.
TEST(GatherFamilies, EveryRankKnowsWhetherAFamilyIsSplit) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  const std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    for (const auto& b : distributions(keys.size(), P, 60, 3)) {
      const std::vector<int> targets = targets_from_bounds(keys, space, b);
      bool split = false;
      for (std::size_t i = 0; i < keys.size(); ++i)
        for (std::size_t j = 0; j < keys.size(); ++j)
          split = split ||
                  (octree::parent(keys[i]) == octree::parent(keys[j]) && targets[i] != targets[j]);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, world_rank()));
      runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
      rt.mesh().changed(d);
      const std::string what = curve_name(curve) + " " + bounds_text(b);
      EXPECT_EQ(rt.mesh().families_split(), split) << what;
      EXPECT_EQ(world_sum(rt.mesh().gather_families(d)) > 0, split) << what;
      EXPECT_FALSE(rt.mesh().families_split()) << what << " (gathered)";
    }
  }
}

TEST(GatherFamilies, RefinedSiblingKeepsCurveOrder) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  // Root 0's family is incomplete (child 3 refined, its own family complete); root 1 is
  // refined into a complete family: c0 c1 c2 g0..g7 c4..c7 d0..d7 in Morton order.
  std::vector<Key> keys = refine_all(octree::root_leaves(grid), grid);
  const Key c3 = octree::child(octree::root_key(0, 0, 0), 3);
  keys = refine_where(keys, grid, [&](const Key& k) { return k == c3; });
  ASSERT_EQ(keys.size(), 23u);
  for (const sfc::Curve curve : kCurves)
    for (const auto& b : distributions(keys.size(), P, 80, 2))
      check_gather(grid, curve, keys, b, curve_name(curve) + " " + bounds_text(b));
}

TEST(GatherFamilies, RandomMeshesAndCuts) {
  const int P = world_size();
  for (const sfc::Curve curve : kCurves) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RootGrid grid{{2, 2, 1}};
      const std::vector<Key> keys = random_mesh(grid, 3, 50, 40 + seed);
      for (const auto& b : distributions(keys.size(), P, 10, seed))
        check_gather(grid, curve, keys, b,
                     curve_name(curve) + " seed " + std::to_string(seed) + " " + bounds_text(b));
    }
  }
}

// The adaptation after the dynamic balancer's cuts, which go through families: the families of
// 8 leaves split between ranks are found where they lie (Mesh::split_families), marked there,
// kept alike by the closure, and only those that coarsen come together. The adapted mesh is
// the one that gathering every split family before the marks gives, on every cut.
void check_split(const RootGrid& grid, sfc::Curve curve, const std::vector<Key>& keys,
                 std::span<const std::size_t> bounds, int max_level,
                 const std::function<int(const Key&)>& wanted, const std::string& what) {
  const int me = world_rank();
  const auto space = space_of(curve, grid);
  const auto targets = targets_from_bounds(keys, space, bounds);
  const auto order = along_curve(keys, space);
  std::vector<std::size_t> position(keys.size());
  for (std::size_t p = 0; p < order.size(); ++p) position[order[p]] = p;

  // Gathering first, as the static runtime's adaptation does.
  Domain g = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
  runtime::StaticRuntime gathering(MPI_COMM_WORLD, options(curve));
  gathering.mesh().changed(g);
  gathering.mesh().gather_families(g);
  auto gathered_marks = octree::initial_marks(g.leaves, max_level, wanted);
  octree::close_marks(g.leaves, gathered_marks, grid, gathering.mesh().mailbox(),
                      octree::closure_rounds(max_level, false));
  const auto expected = allgather_keys(octree::plan_adapt(g.leaves, gathered_marks).keys);

  Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, targets, me));
  runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
  rt.mesh().changed(d);
  mesh::Mesh::SplitFamilies split = rt.mesh().split_families(d);
  // The oracle: a complete family whose leaves more than one rank holds, and the rank of its
  // first leaf along the curve.
  Problems p;
  for (const Key& first : complete_families(keys)) {
    std::vector<std::size_t> members;
    for (int o = 0; o < 8; ++o) members.push_back(index_of(keys, octree::sibling(first, o)));
    std::ranges::sort(members, [&](auto a, auto b) { return position[a] < position[b]; });
    const bool across = std::ranges::any_of(
        members, [&](std::size_t i) { return targets[i] != targets[members[0]]; });
    for (const std::size_t i : members) {
      const auto here = d.leaves.find(keys[i]);
      if (!here) continue;
      if (split.complete[*here] != (across ? 1 : 0))
        p.add(str(keys[i]) + (across ? " not found split" : " found split"));
      const int home = across ? targets[members[0]] : me;
      if (split.home[*here] != home)
        p.add(str(keys[i]) + " home " + std::to_string(split.home[*here]) + ", not " +
              std::to_string(home));
    }
  }
  for (std::size_t i = 0; i < d.leaves.size(); ++i)
    if (split.complete[i] != 0 && !std::ranges::any_of(complete_families(keys), [&](const Key& f) {
          return octree::parent(f) == octree::parent(d.leaves[i]) && f.level == d.leaves[i].level;
        }))
      p.add(str(d.leaves[i]) + " found in a complete family");
  EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;

  auto marks = octree::initial_marks(d.leaves, max_level, wanted, split.complete);
  octree::close_marks(d.leaves, marks, grid, rt.mesh().mailbox(),
                      octree::closure_rounds(max_level, true));
  for (std::size_t i = 0; i < marks.size(); ++i)
    if (marks[i] != octree::kCoarsen) split.home[i] = me;
  rt.mesh().move_with_marks(d, split.home, marks);
  auto got = allgather_keys(octree::plan_adapt(d.leaves, marks).keys);
  std::vector<Key> all_expected, all_got;
  for (const auto& r : expected) all_expected.insert(all_expected.end(), r.begin(), r.end());
  for (const auto& r : got) all_got.insert(all_got.end(), r.begin(), r.end());
  std::ranges::sort(all_expected, octree::MortonLess{});
  std::ranges::sort(all_got, octree::MortonLess{});
  EXPECT_EQ(all_got, all_expected) << what << ": not the mesh that gathering first makes";
}

TEST(SplitFamilies, CoarsenWhereTheyLieAsIfGatheredFirst) {
  const int P = world_size();
  // Every leaf wants to coarsen, or a mix of coarsen, stay and refine drawn from its key.
  const std::function<int(const Key&)> all = [](const Key&) { return -1; };
  const std::function<int(const Key&)> mixed = [](const Key& k) {
    const int r = int(key_hash(k, 11) % 5);
    return r == 0 ? 1 : r == 1 ? 0 : -1;
  };
  for (const sfc::Curve curve : kCurves) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      const RootGrid grid{{2, 2, 1}};
      const std::vector<Key> keys = random_mesh(grid, 3, 50, 60 + seed);
      for (const auto& b : distributions(keys.size(), P, 10, seed))
        for (const auto& [name, wanted] : {std::pair{"all", all}, std::pair{"mixed", mixed}})
          check_split(grid, curve, keys, b, 3, wanted,
                      curve_name(curve) + " seed " + std::to_string(seed) + " " + name + " " +
                          bounds_text(b));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 4. Empty ranks

TEST(EmptyRanks, TwoRootsAdvanceRefineAndRebalance) {
  const int P = world_size();
  const RootGrid grid{{2, 1, 1}};
  const BlockShape shape{4, 4, 4, 2};
  for (const sfc::Curve curve : kCurves) {
    const std::string name = curve_name(curve);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve)), ref(MPI_COMM_SELF, options(curve));
    Domain d = make_domain(grid, shape, rt.mesh().initial_roots(grid));
    Domain whole = make_domain(grid, shape, ref.mesh().initial_roots(grid));
    ASSERT_EQ(whole.leaves.size(), 2u);
    EXPECT_EQ(
        partition_problems(allgather_keys(d.leaves.keys()), keys_of(whole), space_of(curve, grid)),
        "")
        << name;
    EXPECT_EQ(world_sum(d.leaves.empty() ? 1 : 0), std::max(0, P - 2)) << name;
    rt.mesh().changed(d);
    ref.mesh().changed(whole);
    EXPECT_TRUE(same_bits(checksums(d, MPI_COMM_WORLD), checksums(whole, MPI_COMM_SELF))) << name;

    runtime::StageWork work;
    work.stencil = 7;
    work.vars = {0, 2};
    work.num_vars = 2;
    work.checksum = true;
    for (int s = 0; s < 2; ++s)
      stage_and_compare(rt, d, ref, whole, work, name + " roots stage " + std::to_string(s));
    EXPECT_EQ(world_sum(rt.mesh().gather_families(d)), 0) << name;

    // Refine everything (the closure runs through the mailbox with empty ranks), split the data.
    auto refine = [](runtime::StaticRuntime& r, Domain& dom) {
      auto marks = octree::initial_marks(dom.leaves, 1, [](const Key&) { return 1; });
      octree::close_marks(dom.leaves, marks, dom.grid, r.mesh().mailbox(),
                          octree::closure_rounds(1, false));
      apply_plan(dom, octree::plan_adapt(dom.leaves, marks));
      r.mesh().changed(dom);
    };
    refine(rt, d);
    refine(ref, whole);
    EXPECT_EQ(world_sum(std::int64_t(d.leaves.size())), 16) << name;
    stage_and_compare(rt, d, ref, whole, work, name + " refined stage");

    // Rebalance by block count: families stay together, so with P > 2 ranks stay empty.
    rt.mesh().rebalance(d, std::vector<std::int64_t>(d.leaves.size(), 1));
    const auto space = space_of(curve, grid);
    EXPECT_EQ(partition_problems(allgather_keys(d.leaves.keys()), keys_of(whole), space), "")
        << name;
    EXPECT_TRUE(all_ranks(d.leaves.size() % 8 == 0, "a family was split by rebalance")) << name;
    stage_and_compare(rt, d, ref, whole, work, name + " rebalanced stage");

    // All the weight on the last leaf along the curve: every leaf starts at weight 0, so all
    // go to rank 0 and every other rank is empty.
    const auto order = along_curve(keys_of(whole), space);
    const Key last = whole.leaves[order.back()];
    std::vector<std::int64_t> w(d.leaves.size(), 0);
    for (std::size_t i = 0; i < w.size(); ++i)
      if (d.leaves[i] == last) w[i] = 1;
    rt.mesh().rebalance(d, w);
    EXPECT_TRUE(all_ranks(d.leaves.size() == (world_rank() == 0 ? 16u : 0u), "not all on rank 0"))
        << name;
    stage_and_compare(rt, d, ref, whole, work, name + " after a skewed rebalance");
    EXPECT_TRUE(same_bits(checksums(d, MPI_COMM_WORLD), checksums(whole, MPI_COMM_SELF))) << name;
  }
}

TEST(Rebalance, MatchesTheGlobalCutWithFamiliesKeptTogether) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    // The initial roots: contiguous along the curve, in equal shares.
    const auto roots = rt.mesh().initial_roots(grid);
    EXPECT_EQ(partition_problems(allgather_keys(roots), octree::root_leaves(grid), space), "")
        << curve_name(curve);
    EXPECT_TRUE(all_ranks(std::int64_t(roots.size()) * P >= grid.count() - P &&
                              std::int64_t(roots.size()) * P <= grid.count() + P,
                          "unequal share of roots"))
        << curve_name(curve);

    for (std::uint64_t seed = 1; seed <= 12; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 500 + seed);
      const auto before = cut_whole(keys, space, random_weights(keys.size(), 3, 600 + seed), P);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, before, me));
      rt.mesh().changed(d);

      // The oracle: the whole curve cut by the weights, then every complete family that was on
      // one rank sent where its first leaf along the curve goes.
      const auto weights = random_weights(keys.size(), 10, 700 + seed);
      auto expected = cut_whole(keys, space, weights, P);
      keep_families_whole(keys, space, before, expected);

      std::vector<std::int64_t> local_weights;
      std::int64_t leaving = 0;
      for (const Key& k : d.leaves.keys()) {
        local_weights.push_back(weights[index_of(keys, k)]);
        if (expected[index_of(keys, k)] != me) ++leaving;
      }
      const std::int64_t sent = rt.mesh().rebalance(d, local_weights);
      EXPECT_TRUE(all_ranks(sent == leaving, what + ": sent " + std::to_string(sent) +
                                                 " blocks, expected " + std::to_string(leaving)))
          << what;
      const std::string holdings = check_holdings(d, share(keys, expected, me));
      EXPECT_TRUE(all_ranks(holdings.empty(), what + ": " + holdings)) << what;
      EXPECT_EQ(partition_problems(allgather_keys(d.leaves.keys()), keys, space), "") << what;
    }
  }
}

TEST(MeshAdapted, KeepsThePartitionUnlessBlocksMoved) {
  // Splits and whole-family merges move no rank's first position along the curve, so after an
  // adaptation the runtime keeps its partition and skips the allgather that finds it; once
  // blocks moved (the balance before the adaptation), it must find it again. Either way the
  // owners it answers are those of a fresh exchange and the halos are right.
  const int me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const BlockShape shape{4, 4, 4, 2};
  runtime::StageWork work;
  work.stencil = 7;
  work.vars = {0, 2};
  work.num_vars = 2;
  work.checksum = true;
  for (const sfc::Curve curve : kCurves) {
    const std::string name = curve_name(curve);
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve)), ref(MPI_COMM_SELF, options(curve));
    const std::vector<Key> keys = random_mesh(grid, 2, 50, 4242);
    const auto before = cut_whole(keys, space, random_weights(keys.size(), 4, 77), world_size());
    Domain d = make_domain(grid, shape, share(keys, before, me));
    Domain whole = make_domain(grid, shape, keys);
    rt.mesh().changed(d);
    ref.mesh().changed(whole);
    // Refines a quarter of the leaves (by key, so alike wherever a leaf is).
    const auto refine_some = [](const Domain& dom, std::uint64_t seed) {
      std::vector<std::int8_t> marks;
      for (const Key& k : dom.leaves.keys())
        marks.push_back(k.level < 3 && key_hash(k, seed) % 4 == 0 ? octree::kRefine
                                                                  : octree::kStay);
      return marks;
    };
    // Collectives of Mesh::adapted, and whether its owners are a fresh exchange's.
    const auto adapted = [&](const std::string& what) {
      const auto t0 = rt.comm().traffic();
      rt.mesh().adapted(d);
      const std::int64_t used = (rt.comm().traffic() - t0).collectives;
      runtime::StaticRuntime fresh(MPI_COMM_WORLD, options(curve));
      Domain same = make_domain(grid, shape, keys_of(d));
      const auto t1 = fresh.comm().traffic();
      fresh.mesh().changed(same);
      const std::int64_t full = (fresh.comm().traffic() - t1).collectives;
      bool owners = true;
      for (const auto& part : allgather_keys(d.leaves.keys()))
        for (const Key& k : part) owners = owners && rt.mesh().owner(k) == fresh.mesh().owner(k);
      EXPECT_TRUE(all_ranks(owners, what + ": an owner differs from a fresh exchange's")) << what;
      return std::pair(used, full);
    };

    // An adaptation with no block moved: one collective fewer than a full rebuild. The ranks
    // adapt their blocks as the driver does (mesh::adapt_blocks), the reference by splitting
    // each block on its own: the stages below compare the two bitwise. Costs identify their
    // blocks (make_domain), so a child must carry its parent's and a kept block its own.
    const std::vector<Key> old_keys = keys_of(d);
    const octree::AdaptPlan plan_in_place = octree::plan_adapt(d.leaves, refine_some(d, 5));
    mesh::adapt_blocks(d, plan_in_place);
    apply_plan(whole, octree::plan_adapt(whole.leaves, refine_some(whole, 5)));
    ASSERT_EQ(d.cost.size(), plan_in_place.keys.size()) << name;
    bool costs_follow = true;
    for (std::size_t j = 0; j < d.cost.size(); ++j)
      costs_follow =
          costs_follow && d.cost[j] == key_cost(old_keys[plan_in_place.origin[j].old_index]);
    EXPECT_TRUE(all_ranks(costs_follow, name + ": a cost record did not follow its block")) << name;
    const auto [kept, full] = adapted(name + " adapted in place");
    ref.mesh().adapted(whole);
    EXPECT_EQ(kept, full - 1) << name << ": the partition was exchanged again";
    stage_and_compare(rt, d, ref, whole, work, name + " adapted in place");

    // Blocks moved before the adaptation: the partition is found again.
    std::vector<std::int8_t> marks = refine_some(d, 6);
    octree::AdaptPlan plan = octree::plan_adapt(d.leaves, marks);
    const std::int64_t sent = rt.mesh().rebalance_for_adapt(
        d, plan, random_weights(plan.keys.size(), 9, 31 + std::uint64_t(me)), marks);
    apply_plan(d, octree::plan_adapt(d.leaves, marks));
    apply_plan(whole, octree::plan_adapt(whole.leaves, refine_some(whole, 6)));
    const auto [after_move, full_after] = adapted(name + " adapted after a move");
    ref.mesh().adapted(whole);
    // The partition was gathered while the blocks travelled: the rebuild takes it, one
    // collective fewer than a fresh exchange (whose owners it has: `adapted` checks).
    if (world_sum(sent) > 0) {
      EXPECT_EQ(after_move, full_after - 1) << name << ": the partition was exchanged again";
    }
    stage_and_compare(rt, d, ref, whole, work, name + " adapted after a move");
  }
}

TEST(Rebalance, BeforeAdaptLeavesNothingForTheBalanceAfter) {
  // Leaves marked at random (splits, merges of whole families, and some that stay), balanced for
  // what they become, then adapted: the adapted mesh is the one the marks make, each rank's
  // leaves carry their own marks, and the balance after the adaptation moves nothing.
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const BlockShape shape{2, 2, 2, 1};
  std::int64_t merged_and_moved = 0;
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 800 + seed);
      const auto before = cut_whole(keys, space, random_weights(keys.size(), 4, 900 + seed), P);
      // A family merges when it is whole on one rank and its parent is drawn.
      std::set<Key, octree::MortonLess> merging;
      for (const Key& first : complete_families(keys)) {
        bool whole = key_hash(octree::parent(first), 37 + seed) % 2 == 0;
        for (int o = 0; o < 8; ++o)
          whole = whole && before[index_of(keys, octree::sibling(first, o))] ==
                               before[index_of(keys, first)];
        if (whole)
          for (int o = 0; o < 8; ++o) merging.insert(octree::sibling(first, o));
      }
      const auto mark_of = [&](const Key& k) -> std::int8_t {
        if (merging.count(k)) return octree::kCoarsen;
        return key_hash(k, 31 + seed) % 4 == 0 ? octree::kRefine : octree::kStay;
      };
      Domain d = make_domain(grid, shape, share(keys, before, me));
      rt.mesh().changed(d);
      std::vector<std::int8_t> marks;
      for (const Key& k : d.leaves.keys()) marks.push_back(mark_of(k));
      const octree::AdaptPlan plan = octree::plan_adapt(d.leaves, marks);
      std::vector<Key> adapted_keys;
      for (const auto& part : allgather_keys(plan.keys))
        adapted_keys.insert(adapted_keys.end(), part.begin(), part.end());
      std::sort(adapted_keys.begin(), adapted_keys.end(), octree::MortonLess{});

      const std::vector<std::int64_t> ones(plan.keys.size(), 1);
      std::int64_t sent_ahead = 0;
      if (seed % 2 == 0) {
        sent_ahead = rt.mesh().rebalance_for_adapt(d, plan, ones, marks);
      } else {
        // The same in its three phases: the cut and the merging are local once the weights
        // along the curve are known, the move the migration's exchange (which also says whether
        // any block moved) and the new partition's.
        const comm::Communicator& comm = rt.mesh().comm();
        const auto along = comm.prefix_sum(std::int64_t(ones.size()));
        const auto before_cut = comm.traffic();
        mesh::Mesh::AdaptCut cut = rt.mesh().cut_for_adapt(d, plan, ones, {}, along);
        const auto families_leaving = std::ranges::count(cut.merges_away, true);
        const bool merged = rt.mesh().merge_leaving(d, marks, cut);
        EXPECT_TRUE(merged) << what;
        EXPECT_EQ((comm.traffic() - before_cut).collectives, 0) << what;
        // Each family that leaves is its parent now; its cells are coarsened by the move, once
        // the headers are on their way, and that time is the move's to report.
        EXPECT_EQ(std::ptrdiff_t(cut.pending.size()), families_leaving) << what;
        const auto leaving = std::ranges::count_if(cut.targets, [&](int t) { return t != me; });
        const bool moves = world_sum(std::int64_t(leaving)) > 0;
        const auto before_move = comm.traffic();
        const std::optional<std::int64_t> sent = rt.mesh().move_for_adapt(d, marks, cut, merged);
        // The migration's exchange, and when blocks move the partition's, made while their
        // storage travels.
        EXPECT_EQ((comm.traffic() - before_move).collectives, moves ? 2 : 1) << what;
        EXPECT_EQ(sent.has_value(), moves) << what;
        EXPECT_EQ(sent.value_or(0), std::int64_t(leaving)) << what;
        EXPECT_TRUE(cut.pending.empty()) << what;
        if (families_leaving > 0) {
          EXPECT_GT(cut.adapting_seconds, 0.0) << what;
        }
        sent_ahead = sent.value_or(0);
      }
      // A merging family that changed rank arrives merged: its parent, to stay, holding what
      // coarsening the children makes, at the mean of their costs.
      const auto arrives_merged = [&](const Key& k) {
        return k.level < octree::kMaxLevel && merging.count(octree::child(k, 0)) > 0;
      };
      Problems p;
      if (marks.size() != d.leaves.size()) p.add("marks do not match the leaves");
      std::int64_t parents = 0;
      for (std::size_t i = 0; p.none() && i < d.leaves.size(); ++i) {
        const Key& k = d.leaves[i];
        if (!arrives_merged(k)) {
          if (marks[i] != mark_of(k)) p.add(str(k) + " arrived with another mark");
          continue;
        }
        ++parents;
        if (before[index_of(keys, octree::child(k, 0))] == me)
          p.add(str(k) + ": merged on the rank it did not leave");
        if (marks[i] != octree::kStay) p.add(str(k) + ": a merged parent not marked to stay");
        std::array<Block, 8> children;
        std::array<const Block*, 8> from{};
        double cost = 0;
        for (int o = 0; o < 8; ++o) {
          children[std::size_t(o)] = initial_block(octree::child(k, o), shape);
          from[std::size_t(o)] = &children[std::size_t(o)];
          cost += key_cost(octree::child(k, o)) / 8;
        }
        if (const auto diff = first_difference(d.blocks[i], stencil::coarsen(from), true))
          p.add(str(k) + ": the merged parent " + *diff);
        if (d.cost[i] != cost) p.add(str(k) + ": the merged parent's cost");
      }
      EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
      merged_and_moved += world_sum(parents);
      // What was sent is what arrived from elsewhere, a merged parent one block.
      std::int64_t arrived = 0;
      for (const Key& k : d.leaves.keys())
        arrived += before[index_of(keys, arrives_merged(k) ? octree::child(k, 0) : k)] != me;
      EXPECT_EQ(world_sum(sent_ahead), world_sum(arrived)) << what;

      const octree::AdaptPlan again = octree::plan_adapt(d.leaves, marks);
      std::vector<Key> now;
      for (const auto& part : allgather_keys(again.keys))
        now.insert(now.end(), part.begin(), part.end());
      std::sort(now.begin(), now.end(), octree::MortonLess{});
      EXPECT_TRUE(now == adapted_keys) << what << ": the balance changed the adapted mesh";
      EXPECT_EQ(partition_problems(allgather_keys(again.keys), adapted_keys, space), "") << what;

      Domain after = make_domain(grid, shape, again.keys);
      rt.mesh().changed(after);
      const std::int64_t sent =
          rt.mesh().rebalance(after, std::vector<std::int64_t>(after.leaves.size(), 1));
      EXPECT_TRUE(all_ranks(sent == 0, what + ": the balance after the adaptation sent " +
                                           std::to_string(sent) + " blocks"))
          << what;
    }
  }
  // Some family merged on the rank it left.
  if (P > 1) {
    EXPECT_GT(merged_and_moved, 0);
  }
}

}  // namespace
