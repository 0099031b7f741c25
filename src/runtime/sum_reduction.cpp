#include "runtime/sum_reduction.hpp"

#include <algorithm>
#include <utility>

namespace miniamr::runtime {

SumReduction::SumReduction(const comm::Communicator& comm, std::span<stencil::ExactSum> sums)
    : count_(sums.size()) {
  const std::size_t n = stencil::ExactSum::kLimbs;
  limbs_.reserve(sums.size() * n);
  for (auto& s : sums) {
    const auto l = s.limbs();  // normalised: every limb holds 32 bits, so integer sums carry none
    limbs_.insert(limbs_.end(), l.begin(), l.end());
  }
#ifdef MINIAMR_SIMGRID
  // SMPI implements MPI_Iallreduce as P^2 point-to-point messages (every rank to every other),
  // which neither a real MPI does nor a simulation of thousands of ranks can afford; its
  // blocking MPI_Allreduce follows a real algorithm (smpi/allreduce). The reduction is then
  // complete before the stage goes on, a little less overlap than a real run gets.
  MPI_Allreduce(MPI_IN_PLACE, limbs_.data(), int(limbs_.size()), MPI_INT64_T, MPI_SUM, comm.get());
#else
  MPI_Iallreduce(MPI_IN_PLACE, limbs_.data(), int(limbs_.size()), MPI_INT64_T, MPI_SUM, comm.get(),
                 &request_);
#endif
}

SumReduction::~SumReduction() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
}

SumReduction::SumReduction(SumReduction&& o) noexcept
    : limbs_(std::move(o.limbs_)),
      count_(o.count_),
      request_(std::exchange(o.request_, MPI_REQUEST_NULL)) {}

bool SumReduction::test() {
  if (request_ == MPI_REQUEST_NULL) return true;
  int done = 0;
  MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
  return done != 0;
}

std::vector<double> SumReduction::wait() {
  if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  const std::size_t n = stencil::ExactSum::kLimbs;
  std::vector<double> out;
  out.reserve(count_);
  for (std::size_t v = 0; v < count_; ++v) {
    stencil::ExactSum total;
    const auto part = std::span(limbs_).subspan(v * n, n);
    std::copy(part.begin(), part.end(), total.limbs().begin());
    out.push_back(total.value());
  }
  return out;
}

}  // namespace miniamr::runtime
