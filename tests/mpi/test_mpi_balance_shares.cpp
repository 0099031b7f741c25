// mesh::Mesh::rebalance with per-rank shares on 1..4 ranks (the dynamic balancer's cut at a
// refinement step): the blocks end where the whole curve cut into those shares puts them, in
// contiguous ranges along the curve.
#include "runtime_fixtures.hpp"

namespace {

using namespace runtime_test;

TEST(RebalanceWithShares, MatchesTheWholeCurveCutIntoTheShares) {
  const int P = world_size(), me = world_rank();
  const RootGrid grid{{3, 2, 1}};
  // Rank r's share grows with r: 1, 2, 3, 4 (as fractions of their sum).
  std::vector<double> shares(static_cast<std::size_t>(P));
  for (int r = 0; r < P; ++r) shares[std::size_t(r)] = double(r + 1);
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  for (double& s : shares) s /= sum;
  const sfc::Shares cut_shares(shares);
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

}  // namespace
