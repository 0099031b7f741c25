// The balancing strategies on 1..4 ranks: owners stay contiguous along the curve and in rank
// order, families are never split, shares follow the rank speeds, a slow rank gives work away,
// and `central` moves no more than it is allowed to.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/balance_strategies.hpp"
#include "runtime/mpi.hpp"

namespace {

namespace runtime = miniamr::runtime;

struct World {
  runtime::Communicator comm{MPI_COMM_WORLD};
  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
};

bool everywhere(const runtime::Communicator& comm, bool ok) {
  return comm.all(ok);
}

// Every rank's targets joined in rank order (the whole curve).
std::vector<int> joined(const runtime::Communicator& comm, const std::vector<int>& mine) {
  std::vector<std::int64_t> m(mine.begin(), mine.end());
  const auto all = comm.gather(m);
  std::vector<int> out;
  for (const auto& r : all) out.insert(out.end(), r.begin(), r.end());
  int n = int(out.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, comm.get());
  out.resize(std::size_t(n));
  MPI_Bcast(out.data(), n, MPI_INT, 0, comm.get());
  return out;
}

struct Case {
  std::vector<std::int64_t> weights;      // this rank's
  std::vector<std::size_t> family_start;  // this rank's
};

// `n` blocks per rank of weight 100 + (position % 7), families of 8 where they fit.
Case make_case(int n) {
  Case c;
  for (int p = 0; p < n; ++p) {
    c.weights.push_back(100 + p % 7);
    c.family_start.push_back(std::size_t(p - p % 8 + 8 <= n ? p - p % 8 : p));
  }
  return c;
}

TEST(Strategies, OwnersAreContiguousAndFamiliesWhole) {
  World w;
  for (const char* name : {"none", "sfc", "diffusion", "central"}) {
    const auto strategy = runtime::find_strategy(name);
    ASSERT_NE(strategy, nullptr) << name;
    // Uneven holdings: rank r has 8 * (r + 1) blocks; rank 1 is twice as slow.
    const Case c = make_case(8 * (w.rank() + 1));
    runtime::BalanceInput in{c.weights, c.family_start, w.rank() == 1 ? 0.5 : 1.0, 1.0};
    const auto t = strategy(w.comm, in);
    ASSERT_EQ(t.size(), c.weights.size()) << name;
    const auto all = joined(w.comm, t);
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end())) << name;
    EXPECT_TRUE(
        everywhere(w.comm, std::ranges::all_of(t, [&](int r) { return r >= 0 && r < w.size(); })))
        << name;
    bool whole = true;
    for (std::size_t p = 0; p < t.size(); ++p) whole = whole && t[p] == t[c.family_start[p]];
    EXPECT_TRUE(everywhere(w.comm, whole)) << name << ": a family was split";
    if (std::string(name) == "none") {
      EXPECT_TRUE(everywhere(w.comm, std::ranges::all_of(t, [&](int r) { return r == w.rank(); })));
    }
  }
}

TEST(Strategies, SharesFollowSpeeds) {
  World w;
  if (w.size() < 2) GTEST_SKIP() << "needs two ranks";
  // 64 equal blocks per rank, rank 1 three times as slow: it should end with about a third of
  // a fast rank's share.
  const int n = 64;
  Case c;
  for (int p = 0; p < n; ++p) {
    c.weights.push_back(1000);
    c.family_start.push_back(std::size_t(p));
  }
  const std::vector<double> speeds = [&] {
    std::vector<double> s(static_cast<std::size_t>(w.size()), 3.0);
    s[1] = 1.0;
    return s;
  }();
  for (const char* name : {"sfc", "central"}) {
    runtime::BalanceInput in{c.weights, c.family_start, speeds[std::size_t(w.rank())], 1.0};
    const auto all = joined(w.comm, runtime::find_strategy(name)(w.comm, in));
    const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
    for (int r = 0; r < w.size(); ++r) {
      const auto got = double(std::count(all.begin(), all.end(), r));
      const double want = double(n * w.size()) * speeds[std::size_t(r)] / total_speed;
      EXPECT_NEAR(got, want, 1.0) << name << " rank " << r;
    }
  }
  // Diffusion: the slow rank gives blocks to its neighbours and takes none.
  runtime::BalanceInput in{c.weights, c.family_start, speeds[std::size_t(w.rank())], 1.0};
  const auto t = runtime::find_strategy("diffusion")(w.comm, in);
  const auto all = joined(w.comm, t);
  EXPECT_LT(std::count(all.begin(), all.end(), 1), n);
  if (w.rank() == 1) {
    EXPECT_TRUE(std::ranges::any_of(t, [](int r) { return r != 1; }));
  }
}

TEST(Strategies, DiffusionMovesWholeFamilies) {
  World w;
  if (w.size() < 2) GTEST_SKIP() << "needs two ranks";
  // Rank 0 holds two families of 8 (weight 1600), rank 1 two single blocks (200), equal speeds:
  // the flow of 700 is less than a family, but more than half of one, so the trailing family
  // moves, whole.
  Case c;
  const int n = w.rank() == 0 ? 16 : w.rank() == 1 ? 2 : 0;
  for (int p = 0; p < n; ++p) {
    c.weights.push_back(100);
    c.family_start.push_back(w.rank() == 0 ? std::size_t(p - p % 8) : std::size_t(p));
  }
  runtime::BalanceInput in{c.weights, c.family_start, 1.0, 1.0};
  const auto t = runtime::find_strategy("diffusion")(w.comm, in);
  if (w.rank() == 0) {
    EXPECT_TRUE(std::all_of(t.begin(), t.begin() + 8, [](int r) { return r == 0; }));
    EXPECT_TRUE(std::all_of(t.begin() + 8, t.end(), [](int r) { return r == 1; }));
  }
}

TEST(Strategies, CentralMovesAtMostMaxMove) {
  World w;
  if (w.size() < 2) GTEST_SKIP() << "needs two ranks";
  // Everything on rank 0: a full re-cut would move most blocks; allow a quarter.
  const int n = w.rank() == 0 ? 32 * w.size() : 0;
  Case c;
  for (int p = 0; p < n; ++p) {
    c.weights.push_back(10);
    c.family_start.push_back(std::size_t(p));
  }
  runtime::BalanceInput in{c.weights, c.family_start, 1.0, 0.25};
  const auto t = runtime::find_strategy("central")(w.comm, in);
  const auto moved = std::count_if(t.begin(), t.end(), [](int r) { return r != 0; });
  EXPECT_TRUE(everywhere(w.comm, double(moved) <= 0.25 * double(32 * w.size()) + 1.0));
  EXPECT_TRUE(everywhere(w.comm, w.rank() != 0 || moved > 0)) << "nothing moved";
}

TEST(Strategies, UnknownNameIsNull) {
  EXPECT_EQ(runtime::find_strategy("greedy"), nullptr);
  EXPECT_EQ(runtime::find_strategy("predictive"), nullptr);  // sfc on forecast costs, in app/
}

}  // namespace
