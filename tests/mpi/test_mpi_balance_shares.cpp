// mesh::Mesh::rebalance with per-rank shares on 1..4 ranks (the dynamic balancer's cut at a
// refinement step): the blocks end where the whole curve cut into those shares puts them, in
// contiguous ranges along the curve.
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

// Rank r's share grows with r: 1, 2, 3, 4 (proportional to them).
sfc::Shares growing_shares(int P) {
  std::vector<double> shares(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) shares[std::size_t(r)] = double(r + 1);
  return sfc::Shares(shares);
}

TEST(RebalanceWithShares, MatchesTheWholeCurveCutIntoTheShares) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const sfc::Shares cut_shares = growing_shares(P);
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 1500 + seed);
      const auto before = cut_whole(keys, space, random_weights(keys.size(), 3, 1600 + seed), P);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, before, me));
      rt.mesh().changed(d);

      // The oracle: the whole curve cut at the shares' bounds, through families or not.
      const auto weights = random_weights(keys.size(), 10, 1700 + seed);
      const auto expected = cut_whole(keys, space, weights, P, cut_shares);

      std::vector<std::int64_t> local_weights;
      for (const Key& k : d.leaves.keys()) local_weights.push_back(weights[index_of(keys, k)]);
      rt.mesh().rebalance(d, local_weights, cut_shares);
      const std::string holdings = check_holdings(d, share(keys, expected, me));
      EXPECT_TRUE(all_ranks(holdings.empty(), what + ": " + holdings)) << what;
      EXPECT_EQ(partition_problems(allgather_keys(d.leaves.keys()), keys, space), "") << what;
    }
  }
}

// The cut before an adaptation with such shares: each leaf goes where the whole curve cut of the
// adapted leaves puts what it becomes, and a leaf to split across a bound where most of its
// children belong (they are made where it is).
TEST(RebalanceWithShares, BeforeAdaptSendsALeafToSplitWhereMostOfItsChildrenBelong) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  const sfc::Shares cut_shares = growing_shares(P);
  std::int64_t split_across = 0;  // leaves to split whose children the cut puts on two ranks
  for (const sfc::Curve curve : kCurves) {
    const auto space = space_of(curve, grid);
    runtime::StaticRuntime rt(MPI_COMM_WORLD, options(curve));
    for (std::uint64_t seed = 1; seed <= 8; ++seed) {
      const std::string what = curve_name(curve) + " seed " + std::to_string(seed);
      const std::vector<Key> keys = random_mesh(grid, 2, 50, 2500 + seed);
      const auto before = cut_whole(keys, space, std::vector<std::int64_t>(keys.size(), 1), P);
      Domain d = make_domain(grid, BlockShape{2, 2, 2, 1}, share(keys, before, me));
      rt.mesh().changed(d);
      std::vector<std::int8_t> marks;
      for (const Key& k : d.leaves.keys())
        marks.push_back(key_hash(k, 2600 + seed) % 3 == 0 ? octree::kRefine : octree::kStay);
      const octree::AdaptPlan plan = octree::plan_adapt(d.leaves, marks);
      std::vector<Key> adapted;
      for (const auto& part : allgather_keys(plan.keys))
        adapted.insert(adapted.end(), part.begin(), part.end());
      std::sort(adapted.begin(), adapted.end(), octree::MortonLess{});
      const auto oracle =
          cut_whole(adapted, space, std::vector<std::int64_t>(adapted.size(), 1), P, cut_shares);

      const std::vector<std::int64_t> ones(plan.keys.size(), 1);
      const auto along = rt.mesh().comm().prefix_sum(std::int64_t(ones.size()));
      const mesh::Mesh::AdaptCut cut = rt.mesh().cut_for_adapt(d, plan, ones, cut_shares, along);
      Problems p;
      for (std::size_t i = 0; i < d.leaves.size(); ++i) {
        const Key& k = d.leaves[i];
        int expected = 0;
        if (marks[i] != octree::kRefine) {
          expected = oracle[index_of(adapted, k)];
        } else {
          std::vector<int> children(static_cast<std::size_t>(P), 0);
          for (int o = 0; o < 8; ++o)
            ++children[std::size_t(oracle[index_of(adapted, octree::child(k, o))])];
          expected =
              int(std::ranges::max_element(children) - children.begin());  // the earlier of two
          split_across += std::ranges::count(children, 0) < P - 1 ? 1 : 0;
        }
        if (cut.targets[i] != expected)
          p.add(str(k) + " goes to rank " + std::to_string(cut.targets[i]) + ", not " +
                std::to_string(expected));
      }
      EXPECT_TRUE(all_ranks(p.none(), what + ": " + p.text())) << what;
    }
  }
  // The case this is about came up (on more than one rank there are bounds to fall among
  // children).
  if (P > 1) {
    EXPECT_GT(world_sum(split_across), 0);
  }
}

}  // namespace
