#include "runtime/exact_reduce.hpp"

#include <algorithm>
#include <cstdint>

namespace miniamr::runtime {

std::vector<double> global_sums(const Communicator& comm, std::span<stencil::ExactSum> sums) {
  const std::size_t n = stencil::ExactSum::kLimbs;
  std::vector<std::int64_t> limbs;
  limbs.reserve(sums.size() * n);
  for (auto& s : sums) {
    const auto l = s.limbs();  // normalised: every limb holds 32 bits, so integer sums carry none
    limbs.insert(limbs.end(), l.begin(), l.end());
  }
  comm.sum_in_place(limbs);
  std::vector<double> out;
  out.reserve(sums.size());
  for (std::size_t v = 0; v < sums.size(); ++v) {
    stencil::ExactSum total;
    const auto part = std::span(limbs).subspan(v * n, n);
    std::copy(part.begin(), part.end(), total.limbs().begin());
    out.push_back(total.value());
  }
  return out;
}

}  // namespace miniamr::runtime
