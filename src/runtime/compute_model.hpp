// What a block's stencil sweep costs when the kernels are not run (--compute model): seconds
// per cell-variable update of each kernel, measured on one machine (tools/calibrate_compute.py)
// and charged to the simulated clock instead of doing the arithmetic.
#pragma once

#include <cstddef>

namespace miniamr::runtime {

struct ComputeModel {
  double stencil7_s = 0;   // per cell-variable update of the 7-point stencil
  double stencil27_s = 0;  // of the 27-point stencil
  double variable_s = 0;   // of the variable-work kernels (--stencil 0)

  // The modelled seconds of sweeping `vars` variables of a block of `cells` interior cells.
  double sweep_seconds(int stencil, std::size_t cells, int vars) const {
    const double per_update = stencil == 7 ? stencil7_s : stencil == 27 ? stencil27_s : variable_s;
    return per_update * double(cells) * double(vars);
  }
};

}  // namespace miniamr::runtime
