// A checksum reduction that may stay in flight: the exact sums of a stage's variables, their
// limbs added as integers by one non-blocking MPI_Iallreduce (so the totals cannot depend on
// the rank count or the order of additions), rounded once when complete.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "comm/mpi.hpp"
#include "stencil/exact_sum.hpp"

namespace miniamr::runtime {

class SumReduction {
 public:
  // Collective (in the same order on every rank). Starts reducing `sums`.
  SumReduction(const comm::Communicator& comm, std::span<stencil::ExactSum> sums);
  ~SumReduction();
  SumReduction(const SumReduction&) = delete;
  SumReduction& operator=(const SumReduction&) = delete;
  SumReduction(SumReduction&& o) noexcept;
  SumReduction& operator=(SumReduction&&) = delete;

  // Whether the reduction has completed (drives MPI progress).
  bool test();
  // Waits for completion and returns the correctly rounded global totals.
  std::vector<double> wait();

 private:
  std::vector<std::int64_t> limbs_;
  std::size_t count_ = 0;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace miniamr::runtime
