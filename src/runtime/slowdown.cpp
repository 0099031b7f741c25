#include "runtime/slowdown.hpp"

#include <cmath>
#include <numbers>

#include "runtime/compute_charge.hpp"
#include "stencil/hash.hpp"

namespace miniamr::runtime {

double Slowdown::extra(double seconds, std::uint64_t id) const {
  double x = (factor_ - 1.0) * seconds;
  if (noise_ > 0.0) {
    // Box-Muller from two counter-based uniforms.
    const std::uint64_t h = stencil::hash_combine(seed_, id);
    const double u1 = 1.0 - stencil::to_unit(h);  // (0, 1]
    const double u2 = stencil::to_unit(stencil::splitmix64(h));
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    x += seconds * std::fabs(noise_ * z);
  }
  return x;
}

void Slowdown::after(double seconds, std::uint64_t id, Work work) const {
  if (!active()) return;
  const double x = extra(seconds, id);
  charge_compute(x);
  spent_ns_[std::size_t(work)].fetch_add(std::llround(x * 1e9), std::memory_order_relaxed);
}

double Slowdown::spent(Work work) const {
  return double(spent_ns_[std::size_t(work)].load(std::memory_order_relaxed)) * 1e-9;
}

}  // namespace miniamr::runtime
