#include "netbench/measure.hpp"

#include <fmt/format.h>

#include "netbench/kernels.hpp"

namespace miniamr::netbench {

namespace {

constexpr int kResultTag = 7;

// The pair's first rank sends its times to rank 0 when it is not rank 0 (a pair of ranks on
// another node than rank 0's, where rank 0's node has one rank).
Timings collect(const Timings& mine, const RankPair& pair, int rank, int reps, MPI_Comm comm) {
  if (pair.a == 0) return mine;
  Timings got;
  if (rank == pair.a) {
    std::vector<double> flat = mine.seconds;
    flat.insert(flat.end(), mine.send_overhead_s.begin(), mine.send_overhead_s.end());
    MPI_Send(flat.data(), int(flat.size()), MPI_DOUBLE, 0, kResultTag, comm);
  } else if (rank == 0) {
    MPI_Status status;
    MPI_Probe(pair.a, kResultTag, comm, &status);
    int n = 0;
    MPI_Get_count(&status, MPI_DOUBLE, &n);
    std::vector<double> flat(static_cast<std::size_t>(n));
    MPI_Recv(flat.data(), n, MPI_DOUBLE, pair.a, kResultTag, comm, MPI_STATUS_IGNORE);
    got.seconds.assign(flat.begin(), flat.begin() + reps);
    got.send_overhead_s.assign(flat.begin() + reps, flat.end());
  }
  return got;
}

}  // namespace

std::vector<ResultRow> run_schedule(const BenchConfig& config, const Schedule& schedule,
                                    MPI_Comm comm, std::FILE* progress) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::vector<ResultRow> rows;
  for (const Step& step : schedule.steps) {
    const TestSpec& test = config.tests[std::size_t(step.test)];
    const std::vector<std::int64_t> sizes = message_sizes(test.sizes);
    const RankPair* pair = step.pair >= 0 ? &schedule.pairs[std::size_t(step.pair)] : nullptr;
    const bool involved = !pair || rank == pair->a || rank == pair->b;
    const double start = MPI_Wtime();
    if (involved) {
      Buffers buffers(test);
      for (const std::int64_t bytes : sizes) {
        Timings t = pair ? run_pair_test(test, bytes, comm, rank == pair->a ? pair->b : pair->a,
                                         rank == pair->a, buffers)
                         : run_collective_test(test, bytes, comm, buffers);
        if (pair) t = collect(t, *pair, rank, test.reps, comm);
        if (rank != 0) continue;
        ResultRow row =
            summarise(test.kind, bytes, messages_per_rep(test), t.seconds, t.send_overhead_s);
        row.pair_class = pair ? std::string(pair_class_name(pair->pair_class)) : "all";
        row.rank_a = pair ? pair->a : -1;
        row.rank_b = pair ? pair->b : -1;
        row.ranks = pair ? 2 : schedule.ranks;
        rows.push_back(std::move(row));
      }
    } else if (rank == 0) {
      // Rank 0 is in every pair when it has a partner, but a pair on another node may not
      // include it: it still gathers that pair's times.
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const Timings t = collect({}, *pair, rank, test.reps, comm);
        ResultRow row =
            summarise(test.kind, sizes[i], messages_per_rep(test), t.seconds, t.send_overhead_s);
        row.pair_class = std::string(pair_class_name(pair->pair_class));
        row.rank_a = pair->a;
        row.rank_b = pair->b;
        row.ranks = 2;
        rows.push_back(std::move(row));
      }
    }
    // No step starts before the previous one has ended on every rank.
    MPI_Barrier(comm);
    if (progress && rank == 0)
      fmt::print(
          progress, "{:<18} {:<10} {:<8} {} sizes, {} to {} bytes, {:.2f} s\n",
          test_name(test.kind), pair ? pair_class_name(pair->pair_class) : std::string_view("all"),
          pair ? fmt::format("{}<->{}", pair->a, pair->b) : fmt::format("{} ranks", schedule.ranks),
          sizes.size(), sizes.front(), sizes.back(), MPI_Wtime() - start);
  }
  return rows;
}

}  // namespace miniamr::netbench
