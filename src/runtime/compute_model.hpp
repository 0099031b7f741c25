// What a block's stencil sweep costs when the kernels are not run (--compute model): seconds
// per cell-variable update of each kernel, measured on one machine (tools/calibrate_compute.py)
// and charged to the simulated clock instead of doing the arithmetic.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace miniamr::runtime {

// The costs measured on one mesh size.
struct ComputeCost {
  double working_set_bytes = 0;  // block storage of the rank they were measured on (0: unknown)
  double stencil7_s = 0;         // per cell-variable update of the 7-point stencil
  double stencil27_s = 0;        // of the 27-point stencil
  double variable_s = 0;         // of the variable-work kernels (--stencil 0)

  double per_update(int stencil) const {
    return stencil == 7 ? stencil7_s : stencil == 27 ? stencil27_s : variable_s;
  }
};

struct ComputeModel {
  // Ascending by working set. A sweep costs more per update when a rank's blocks no longer fit
  // in cache (on one machine: 1.1 ns per 7-point update with 8 blocks of 40 variables, 2.9 ns
  // with 512), so a rank's cost is interpolated between the two measured sizes around its own,
  // linearly in the logarithm of the size, and held at the ends.
  std::vector<ComputeCost> points;

  ComputeCost at(double working_set_bytes) const {
    if (points.empty()) return {};
    if (points.size() == 1 || working_set_bytes <= points.front().working_set_bytes)
      return points.front();
    if (working_set_bytes >= points.back().working_set_bytes) return points.back();
    std::size_t i = 1;
    while (points[i].working_set_bytes < working_set_bytes) ++i;
    const ComputeCost& a = points[i - 1];
    const ComputeCost& b = points[i];
    const double f = std::log(working_set_bytes / a.working_set_bytes) /
                     std::log(b.working_set_bytes / a.working_set_bytes);
    const auto mix = [f](double x, double y) { return x + f * (y - x); };
    return {working_set_bytes, mix(a.stencil7_s, b.stencil7_s), mix(a.stencil27_s, b.stencil27_s),
            mix(a.variable_s, b.variable_s)};
  }
};

// The modelled seconds of sweeping `vars` variables of a block of `cells` interior cells.
inline double sweep_seconds(const ComputeCost& cost, int stencil, std::size_t cells, int vars) {
  return cost.per_update(stencil) * double(cells) * double(vars);
}

}  // namespace miniamr::runtime
