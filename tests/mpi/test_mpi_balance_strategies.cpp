// The balancing strategies on 1..4 ranks as the balancer runs them: one summary per rank
// gathered in one collective, the same cut worked out on every rank, and each rank mapping its
// own blocks. Owners stay contiguous along the curve and in rank order, shares follow the rank
// speeds, a slow rank gives work away, and `central` moves no
// more than it is allowed to.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "comm/mpi.hpp"
#include "runtime/balance.hpp"
#include "sfc/partition.hpp"

namespace {

namespace runtime = miniamr::runtime;
namespace comm = miniamr::comm;
namespace balance = miniamr::runtime::balance;

struct World {
  comm::Communicator comm{MPI_COMM_WORLD};
  int rank() const { return comm.rank(); }
  int size() const { return comm.size(); }
};

bool everywhere(const comm::Communicator& comm, bool ok) {
  return comm.all(ok);
}

// Every rank's targets joined in rank order (the whole curve), on every rank.
std::vector<int> joined(const comm::Communicator& comm, const std::vector<int>& mine) {
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
  std::vector<std::int64_t> weights;  // this rank's
};

// `n` blocks of weight 100 + (position % 7).
Case make_case(int n) {
  Case c;
  for (int p = 0; p < n; ++p) c.weights.push_back(100 + p % 7);
  return c;
}

// What the balancer does for a strategy: gather the summaries, cut, map this rank's blocks.
std::vector<int> targets(const comm::Communicator& comm, balance::Strategy s, const Case& c,
                         double speed, double max_move = 1.0) {
  balance::RankSummary mine;
  mine.work = std::accumulate(c.weights.begin(), c.weights.end(), std::int64_t{0});
  mine.blocks = std::int64_t(c.weights.size());
  mine.speed = speed;
  mine.noise = 0.01;
  mine.speed_error = 0.01;
  std::vector<balance::RankSummary> all(std::size_t(comm.size()));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm.get());
  const auto speeds = balance::settled_speeds(all, {}, {});
  const balance::Proposal p = balance::propose(all, {s, max_move, speeds, 1, {}});
  return miniamr::sfc::cut(c.weights, balance::offset_of(all, comm.rank()), p.to);
}

constexpr balance::Strategy kAll[] = {balance::Strategy::kNone, balance::Strategy::kSfc,
                                      balance::Strategy::kDiffusion, balance::Strategy::kCentral,
                                      balance::Strategy::kPredictive};

TEST(Strategies, OwnersAreContiguous) {
  World w;
  for (const balance::Strategy s : kAll) {
    const int name = int(s);
    // Uneven holdings: rank r has 8 * (r + 1) blocks; rank 1 is twice as slow.
    const Case c = make_case(8 * (w.rank() + 1));
    const auto t = targets(w.comm, s, c, w.rank() == 1 ? 0.5 : 1.0);
    ASSERT_EQ(t.size(), c.weights.size()) << name;
    const auto all = joined(w.comm, t);
    EXPECT_TRUE(std::is_sorted(all.begin(), all.end())) << name;
    EXPECT_TRUE(
        everywhere(w.comm, std::ranges::all_of(t, [&](int r) { return r >= 0 && r < w.size(); })))
        << name;
    if (s == balance::Strategy::kNone) {
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
  for (int p = 0; p < n; ++p) c.weights.push_back(1000);
  std::vector<double> speeds(static_cast<std::size_t>(w.size()), 3.0);
  speeds[1] = 1.0;
  const double total_speed = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  for (const balance::Strategy s :
       {balance::Strategy::kSfc, balance::Strategy::kCentral, balance::Strategy::kPredictive}) {
    const auto all = joined(w.comm, targets(w.comm, s, c, speeds[std::size_t(w.rank())]));
    for (int r = 0; r < w.size(); ++r) {
      const auto got = double(std::count(all.begin(), all.end(), r));
      const double want = double(n * w.size()) * speeds[std::size_t(r)] / total_speed;
      EXPECT_NEAR(got, want, 1.0) << int(s) << " rank " << r;
    }
  }
  // Diffusion: the slow rank gives blocks to its neighbours and takes none.
  const auto t = targets(w.comm, balance::Strategy::kDiffusion, c, speeds[std::size_t(w.rank())]);
  const auto all = joined(w.comm, t);
  EXPECT_LT(std::count(all.begin(), all.end(), 1), n);
  if (w.rank() == 1) {
    EXPECT_TRUE(std::ranges::any_of(t, [](int r) { return r != 1; }));
  }
}

TEST(Strategies, CentralMovesAtMostMaxMove) {
  World w;
  if (w.size() < 2) GTEST_SKIP() << "needs two ranks";
  // Everything on rank 0: a full re-cut would move most blocks; allow a quarter.
  const int n = w.rank() == 0 ? 32 * w.size() : 0;
  Case c;
  for (int p = 0; p < n; ++p) c.weights.push_back(10);
  const auto t = targets(w.comm, balance::Strategy::kCentral, c, 1.0, 0.25);
  const auto moved = std::count_if(t.begin(), t.end(), [](int r) { return r != 0; });
  if (w.rank() == 0) {
    EXPECT_GT(moved, 0);
    EXPECT_LE(double(moved), 0.25 * double(n) + 1);
  }
}

}  // namespace
