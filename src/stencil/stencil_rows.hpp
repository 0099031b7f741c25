// Row kernels of the fixed stencils, shared by stencil_kernels.cpp and variable_kernels.cpp.
// Plain index arithmetic on restrict pointers so the k loops vectorise and port to Kokkos.
#pragma once

#include <cstddef>

namespace miniamr::stencil::rows {

// See sweep_planes() for the meaning of out/w/c/e; r is the row stride.
inline void seven_point(double* __restrict__ out, const double* __restrict__ w,
                        const double* __restrict__ c, const double* __restrict__ e,
                        std::ptrdiff_t r, int nz) {
  for (int k = 1; k <= nz; ++k)
    out[k] = (w[k] + c[k - r] + c[k - 1] + c[k] + c[k + 1] + c[k + r] + e[k]) / 7.0;
}

// Sum of the 9 cells of one plane around row offset k, in the spec's order.
inline double plane9(const double* __restrict__ p, std::ptrdiff_t r, int k) {
  return p[k - r - 1] + p[k - r] + p[k - r + 1] + p[k - 1] + p[k] + p[k + 1] + p[k + r - 1] +
         p[k + r] + p[k + r + 1];
}

// Plane sums of the 27-point stencil for one whole plane: q(j,k) = plane9(p, j, k). `p` points
// at cell (x,0,0), `q` at the same layout in scratch (only interior (j,k) are written).
inline void plane_sums9(double* __restrict__ q, const double* __restrict__ p, std::ptrdiff_t r,
                        int ny, int nz) {
  for (int j = 1; j <= ny; ++j) {
    const std::ptrdiff_t o = j * r;
    for (int k = 1; k <= nz; ++k) q[o + k] = plane9(p + o, r, k);
  }
}

// new = (P(i-1) + P(i) + P(i+1)) / 27.0 from the rows of three plane-sum planes.
inline void combine27(double* __restrict__ out, const double* __restrict__ a,
                      const double* __restrict__ b, const double* __restrict__ c, int nz) {
  for (int k = 1; k <= nz; ++k) out[k] = (a[k] + b[k] + c[k]) / 27.0;
}

}  // namespace miniamr::stencil::rows
