#include "stencil/stencil_kernels.hpp"

#include "stencil/lane_sum.hpp"
#include "stencil/stencil_rows.hpp"

namespace miniamr::stencil {

double stencil7(Block& block, int var, std::span<double> scratch) {
  const auto r = static_cast<std::ptrdiff_t>(block.shape().row());
  const int nz = block.shape().nz;
  return sweep_planes(block, var, scratch,
                      [r, nz](double* out, const double* w, const double* c, const double* e) {
                        rows::seven_point(out, w, c, e, r, nz);
                      });
}

// Each plane sum P(x) is computed once and reused by the three output planes that need it;
// the additions are the same as in the literal formula, so the results are bitwise identical.
double stencil27(Block& block, int var, std::span<double> scratch) {
  const auto r = static_cast<std::ptrdiff_t>(block.shape().row());
  const int ny = block.shape().ny, nz = block.shape().nz;
  return sweep_plane_sums(
      block, var, scratch,
      [r, ny, nz](double* q, const double* p) { rows::plane_sums9(q, p, r, ny, nz); },
      [nz](double* out, const double* a, const double* b, const double* c) {
        rows::combine27(out, a, b, c, nz);
      });
}

double interior_sum(const Block& block, int var) {
  const BlockShape& s = block.shape();
  const double* u = block.var(var).data();
  LaneSum sum;
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j) sum.add_row(u + s.at(i, j, 1), s.nz);
  return sum.total();
}

}  // namespace miniamr::stencil
