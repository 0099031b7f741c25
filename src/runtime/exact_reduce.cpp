#include "runtime/exact_reduce.hpp"

#include "runtime/sum_reduction.hpp"

namespace miniamr::runtime {

std::vector<double> global_sums(const comm::Communicator& comm, std::span<stencil::ExactSum> sums) {
  return SumReduction(comm, sums).wait();
}

}  // namespace miniamr::runtime
