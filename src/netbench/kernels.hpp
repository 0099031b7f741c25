// The timed exchanges, in the manner of the OSU micro-benchmarks: warm-up repetitions first
// (page faults, protocol set-up, registration caches), then each repetition timed on its own.
#pragma once

#include <cstdint>
#include <vector>

#include <mpi.h>

#include "netbench/config.hpp"

namespace miniamr::netbench {

struct Timings {
  // One time per repetition: on the pair's first rank for point-to-point tests, the slowest
  // rank's for collective ones (on rank 0). Empty on the other ranks.
  std::vector<double> seconds;
  // stream only: per repetition, the mean time spent inside one MPI_Isend (LogGP's send
  // overhead o). Empty otherwise.
  std::vector<double> send_overhead_s;
};

// Messages of one repetition of `test` on one rank: the bytes moved per repetition are this
// times the message size (both directions counted for bidirectional).
int messages_per_rep(const TestSpec& test);

// Buffers for the largest message and window of a test, touched once so that no repetition pays
// for first-touch page faults.
struct Buffers {
  explicit Buffers(const TestSpec& test);
  std::vector<char> send, recv;
};

// Point-to-point tests between this rank and `peer`; `first` is the pair's first rank, which
// times. Both ranks of the pair call it, no other.
Timings run_pair_test(const TestSpec& test, std::int64_t bytes, MPI_Comm comm, int peer, bool first,
                      Buffers& buffers);

// allreduce and neighbour_exchange: every rank of comm calls it.
Timings run_collective_test(const TestSpec& test, std::int64_t bytes, MPI_Comm comm,
                            Buffers& buffers);

}  // namespace miniamr::netbench
