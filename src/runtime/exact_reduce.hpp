// Global sums that cannot depend on the number of ranks or the order of additions.
#pragma once

#include <span>
#include <vector>

#include "comm/mpi.hpp"
#include "stencil/exact_sum.hpp"

namespace miniamr::runtime {

// Collective. The correctly rounded global total of each accumulator: the limbs of all of
// them are added as integers in one MPI_Allreduce.
std::vector<double> global_sums(const comm::Communicator& comm, std::span<stencil::ExactSum> sums);

}  // namespace miniamr::runtime
