// all_or_none: an error on any rank reaches every rank, with the lowest failing rank's message
// and kind, and a run with no error passes through untouched; the same with its vote carried by
// an exchange (LocalAttempt).
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/memory_budget.hpp"
#include "comm/mpi.hpp"
#include "comm/sparse_exchange.hpp"
#include "mpi_checks.hpp"

using miniamr::app::all_or_none;
using miniamr::app::RunError;
using miniamr::app::UsageError;
using mpi_checks::all_ranks;
using mpi_checks::world_rank;
using mpi_checks::world_size;

namespace {

// What all_or_none threw on this rank: kind and message ("" when nothing).
struct Outcome {
  std::string kind, message;
};

template <class Local>
Outcome outcome(Local&& local) {
  try {
    all_or_none(MPI_COMM_WORLD, "testing", local);
  } catch (const UsageError& e) {
    return {"usage", e.what()};
  } catch (const RunError& e) {
    return {"run", e.what()};
  }
  return {};
}

}  // namespace

TEST(CollectiveError, NoErrorPassesThrough) {
  int calls = 0;
  const Outcome o = outcome([&] { ++calls; });
  EXPECT_TRUE(all_ranks(o.kind.empty() && calls == 1, o.message));
}

TEST(CollectiveError, OneRankOutOfMemoryEndsEveryRank) {
  const int last = world_size() - 1;
  const Outcome o = outcome([&] {
    if (world_rank() == last) throw std::bad_alloc();
  });
  const std::string want = world_size() > 1
                               ? "out of memory on rank " + std::to_string(last) + " while testing"
                               : "out of memory while testing";
  EXPECT_TRUE(all_ranks(o.kind == "run" && o.message == want, o.kind + ": " + o.message));
}

TEST(CollectiveError, LowestFailingRankSpeaksAndKeepsItsKind) {
  // Every rank but 0 fails, each with its own message; rank 1's usage error wins.
  const Outcome o = outcome([&] {
    if (world_rank() == 1) throw UsageError("bad input on 1");
    if (world_rank() > 1) throw RunError("run failure on " + std::to_string(world_rank()));
  });
  const bool ok =
      world_size() == 1 ? o.kind.empty() : (o.kind == "usage" && o.message == "bad input on 1");
  EXPECT_TRUE(all_ranks(ok, o.kind + ": " + o.message));
}

TEST(CollectiveError, LibraryExceptionsNameTheRank) {
  const Outcome o = outcome([] {
    if (world_rank() == 0) throw std::out_of_range("vector::at");
  });
  const std::string want = world_size() > 1 ? "failed on rank 0 while testing: vector::at"
                                            : "failed while testing: vector::at";
  EXPECT_TRUE(all_ranks(o.kind == "run" && o.message == want, o.message));
}

TEST(CollectiveError, AVoteRidingOnAnExchangeEndsEveryRankWithNoReductionOfItsOwn) {
  // Each rank sends one value to the next; the failing ranks (none, the last, or all but 0) vote
  // through the exchange's `least`, which must be the only collective.
  const miniamr::comm::Communicator comm(MPI_COMM_WORLD);
  const int P = world_size(), me = world_rank();
  for (const int failing : {0, 1, 2}) {
    const auto fails = [&](int r) { return failing == 1 ? r == P - 1 : failing == 2 && r > 0; };
    const auto before = comm.traffic();
    const miniamr::app::LocalAttempt attempt(MPI_COMM_WORLD, "testing", [&] {
      if (fails(me)) throw RunError("failure on " + std::to_string(me));
    });
    std::map<int, std::vector<int>> outgoing;
    if (P > 1) outgoing[(me + 1) % P] = {me};
    std::array<int, 1> least{attempt.vote()};
    const auto parcels = miniamr::comm::sparse_exchange(comm, outgoing, 401, least);
    const bool delivered =
        P == 1 || (parcels.size() == 1 && parcels[0].items == std::vector<int>{(me + P - 1) % P});
    const bool one = (comm.traffic() - before).collectives == 1;
    Outcome o;
    try {
      attempt.settle(least[0]);
    } catch (const RunError& e) {
      o = {"run", e.what()};
    }
    int first = -1;
    for (int r = P - 1; r >= 0; --r)
      if (fails(r)) first = r;
    const std::string want = first < 0 ? "" : "failure on " + std::to_string(first);
    EXPECT_TRUE(all_ranks(delivered && one && o.message == want,
                          "case " + std::to_string(failing) + ": '" + o.message + "'"));
  }
}

TEST(MemoryBudget, GivenLimitIsTheSameOnEveryRankAndJudgesMeshes) {
  using miniamr::app::does_not_fit;
  using miniamr::app::memory_budget;
  // Each rank asks for a different limit: all must take the smallest.
  const auto budget = memory_budget(MPI_COMM_WORLD, 1e9 * (1 + world_rank()));
  EXPECT_TRUE(all_ranks(budget.bytes == 1e9, std::to_string(budget.bytes)));
  const miniamr::stencil::BlockShape shape{8, 8, 8, 10};  // 10 * 1000 doubles = 80 kB a block
  EXPECT_TRUE(all_ranks(does_not_fit(1000, shape, budget, "it needs").empty()));
  const std::string why = does_not_fit(100000, shape, budget, "it needs");
  EXPECT_TRUE(all_ranks(why.starts_with("it needs 7.") && why.find("GiB") != std::string::npos &&
                            why.find("--max_memory") != std::string::npos,
                        why));
  // Without a limit, the node's memory is shared by its ranks: some figure, and a source.
  const auto node = memory_budget(MPI_COMM_WORLD, 0);
  EXPECT_TRUE(all_ranks(node.bytes > 0 && node.source.find("MemAvailable") != std::string::npos,
                        node.source));
}
