// Exchanges whose receivers do not know their senders, on every communicator size from 1 to the
// world's (3 ranks: one folded into its neighbour; 2 and 4: powers of two): notify(), which
// tells each rank who will send to it and how much, and the two sparse exchanges built on
// NBX (probes and a non-blocking barrier) and on notify() (the simulation build's), which must
// deliver the same parcels; broadcast_values, whose count only rank 0 knows; and the allgather in
// two levels (through a leader per node) that ranks sharing nodes take.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "comm/mpi.hpp"
#include "comm/notify.hpp"
#include "comm/sparse_exchange.hpp"
#include "mpi_checks.hpp"

namespace {

using miniamr::comm::Communicator;
using miniamr::comm::Notice;
using miniamr::comm::Parcel;
using mpi_checks::all_ranks;

// Runs `check(comm)` on communicators of the first 1, 2, .. world ranks; returns the sizes where
// it failed on this rank.
std::string on_every_size(const std::function<bool(const Communicator&)>& check) {
  const int me = mpi_checks::world_rank();
  std::string failed;
  for (int size = 1; size <= mpi_checks::world_size(); ++size) {
    MPI_Comm part = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, me < size ? 0 : MPI_UNDEFINED, me, &part);
    if (part == MPI_COMM_NULL) continue;
    {
      const Communicator comm(part);
      if (!check(comm)) failed.append(1, ' ').append(std::to_string(size));
    }
    MPI_Comm_free(&part);
  }
  return failed;
}

// Rank s sends to every rank t != s for which (s + 2 t) % 3 != 0, `copies(s, t)` messages of
// 10 s + t + m bytes (m = 0, 1, ..): some ranks send nothing, some receive nothing, and with
// many copies more notices pass a rank than the first message of a round holds.
std::vector<Notice> sends_of(int s, int P, int copies) {
  std::vector<Notice> out;
  for (int t = 0; t < P; ++t)
    if (t != s && (s + 2 * t) % 3 != 0)
      for (int m = 0; m < copies; ++m) out.push_back({t, 10 * s + t + m});
  return out;
}

TEST(Notify, EachRankLearnsWhoSendsToItAndHowMuch) {
  for (const int copies : {1, 30}) {
    const std::string failed = on_every_size([copies](const Communicator& comm) {
      const auto before = comm.traffic().collectives;
      const std::vector<Notice> got =
          miniamr::comm::notify(comm, sends_of(comm.rank(), comm.size(), copies));
      std::vector<Notice> want;  // by sender, each sender's in the order it named them
      for (int s = 0; s < comm.size(); ++s)
        for (const Notice& n : sends_of(s, comm.size(), copies))
          if (n.rank == comm.rank()) want.push_back({s, n.bytes});
      std::multiset<std::pair<int, int>> g, w;
      for (const Notice& n : got) g.insert({n.rank, n.bytes});
      for (const Notice& n : want) w.insert({n.rank, n.bytes});
      const bool by_sender =
          std::is_sorted(got.begin(), got.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
      return g == w && by_sender && comm.traffic().collectives - before == 1;
    });
    EXPECT_TRUE(all_ranks(failed.empty(), "notify (" + std::to_string(copies) +
                                              " copies) differs on communicators of" + failed));
  }
}

TEST(SparseExchange, ProbingAndNotifiedExchangesDeliverTheSameParcels) {
  const std::string failed = on_every_size([](const Communicator& comm) {
    const int P = comm.size(), r = comm.rank();
    std::map<int, std::vector<std::int64_t>> outgoing;
    for (const Notice& n : sends_of(r, P, 1)) {
      auto& items = outgoing[n.rank];
      for (int i = 0; i < n.bytes % 7; ++i) items.push_back(1000 * r + 10 * n.rank + i);
    }
    std::vector<Parcel<std::int64_t>> probed = miniamr::comm::sparse_exchange(comm, outgoing, 201);
    std::map<int, std::vector<std::int64_t>> notified;
    miniamr::comm::announced_exchange(comm, outgoing, 202, [&](Parcel<std::int64_t>&& p) {
      notified[p.rank] = std::move(p.items);
    });
    std::map<int, std::vector<std::int64_t>> want;
    for (int s = 0; s < P; ++s)
      for (const Notice& n : sends_of(s, P, 1))
        if (n.rank == r) {
          auto& items = want[s];  // an empty message is a parcel too
          for (int i = 0; i < n.bytes % 7; ++i) items.push_back(1000 * s + 10 * r + i);
        }
    std::map<int, std::vector<std::int64_t>> got;
    for (auto& p : probed) got[p.rank] = std::move(p.items);
    return got == want && notified == want;
  });
  EXPECT_TRUE(all_ranks(failed.empty(), "sparse exchanges differ on communicators of" + failed));
}

TEST(SparseExchange, ValuesRidingOnAnExchangeComeBackAsTheirLeastOverTheRanks) {
  // Both exchanges (and notify under the notified one) on every size: rank r votes 10 + (r * 7)
  // % P and -r; the parcels are as without the votes.
  const std::string failed = on_every_size([](const Communicator& comm) {
    const int P = comm.size(), r = comm.rank();
    std::map<int, std::vector<std::int64_t>> outgoing;
    for (const Notice& n : sends_of(r, P, 1)) outgoing[n.rank] = {std::int64_t(n.bytes)};
    const std::array<int, 2> mine{10 + (r * 7) % P, -r}, want{10, -(P - 1)};
    std::array<int, 2> probed_least = mine, notified_least = mine;
    const auto before = comm.traffic().collectives;
    const auto probed = miniamr::comm::sparse_exchange(comm, outgoing, 203, probed_least);
    std::size_t notified = 0;
    miniamr::comm::announced_exchange(
        comm, outgoing, 204, [&](Parcel<std::int64_t>&&) { ++notified; }, notified_least);
    std::size_t expected = 0;
    for (int s = 0; s < P; ++s)
      for (const Notice& n : sends_of(s, P, 1)) expected += n.rank == r ? 1 : 0;
    return probed_least == want && notified_least == want && probed.size() == expected &&
           notified == expected && comm.traffic().collectives - before == 2;
  });
  EXPECT_TRUE(all_ranks(failed.empty(), "votes wrong on communicators of" + failed));
}

}  // namespace

TEST(BroadcastValues, EveryRankGetsRootsValuesInOneOrTwoCollectives) {
  const std::string failed = on_every_size([](const Communicator& comm) {
    bool ok = true;
    for (std::size_t inline_count = 1; inline_count <= 5; ++inline_count)
      for (std::size_t n = 0; n <= 9; ++n) {
        std::vector<double> want(n);
        for (std::size_t i = 0; i < n; ++i) want[i] = 1.5 * double(i) - 2.0;
        std::vector<double> values = comm.is_root() ? want : std::vector<double>{7.0};
        const auto before = comm.traffic().collectives;
        comm.broadcast_values(values, inline_count);
        const auto used = comm.traffic().collectives - before;
        ok = ok && values == want && used == (n + 1 > inline_count ? 2 : 1);
      }
    return ok;
  });
  EXPECT_TRUE(all_ranks(failed.empty(), "broadcast_values wrong on sizes" + failed));
}

// Ranks grouped into nodes of consecutive ranks, interleaved (uneven where the count is odd) and
// one a node: every rank gets every rank's bytes in rank order, in two levels wherever there is
// more than one node and a node of several ranks.
TEST(AllgatherBytes, EveryRanksBytesInRankOrderThroughNodeLeaders) {
  const std::string failed = on_every_size([](const Communicator& comm) {
    const int P = comm.size(), me = comm.rank();
    bool ok = true;
    const std::array<std::function<int(int)>, 3> groupings{
        [](int r) { return r / 2; }, [](int r) { return r % 2; }, [](int r) { return r; }};
    for (const auto& node_of : groupings) {
      comm.group_nodes(node_of(me));
      std::set<int> nodes;
      for (int r = 0; r < P; ++r) nodes.insert(node_of(r));
      const int n = int(nodes.size());
      ok = ok && comm.allgathers_by_node() == (n > 1 && n < P);
      for (const int bytes : {1, 8, 13}) {
        std::vector<unsigned char> mine(std::size_t(bytes), 0);
        std::vector<unsigned char> all(std::size_t(P * bytes), 0);
        for (int b = 0; b < bytes; ++b)
          mine[std::size_t(b)] = static_cast<unsigned char>(31 * me + b);
        const auto before = comm.traffic().collectives;
        comm.allgather_bytes(mine.data(), bytes, all.data());
        ok = ok && comm.traffic().collectives - before == 1;
        for (int r = 0; r < P; ++r)
          for (int b = 0; b < bytes; ++b)
            ok = ok && all[std::size_t(r * bytes + b)] == static_cast<unsigned char>(31 * r + b);
      }
    }
    return ok;
  });
  EXPECT_TRUE(all_ranks(failed.empty(), "allgather_bytes wrong on sizes" + failed));
}
