#include "stencil/stencil_kernels.hpp"

#include <cassert>
#include <cstddef>
#include <cstring>

#include "stencil/lane_sum.hpp"
#include "stencil/stencil_rows.hpp"

namespace miniamr::stencil {

namespace {

// 7-point sweep for rows of a compile-time length NZ (a multiple of LaneSum::kLanes), the common
// small-block case. Instead of saving each old plane before overwriting it, output plane i is
// computed into a dense scratch plane (ny rows of NZ) straight from the untouched block, and
// written back one plane later, once plane i+1 (the last reader of old plane i) is done. That
// copies ny*NZ cells per plane instead of a whole padded plane. The rows are written with
// two-double vectors (GNU vector extension: SSE2 on the default x86-64 target) because the
// auto-vectoriser leaves the fully unrolled 8-cell rows scalar. Every lane does the additions of
// rows::seven_point in the same order, and the four vector accumulators are LaneSum's eight
// lanes (cell k of a row into lane k % 8), combined as LaneSum::total() does, so values and the
// returned sum are bitwise those of the generic sweep.
#if defined(__GNUC__) || defined(__clang__)
#define MINIAMR_STENCIL7_FIXED 1
using v2d = double __attribute__((vector_size(16)));

inline v2d load2(const double* p) {
  v2d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store2(double* p, v2d v) {
  std::memcpy(p, &v, sizeof v);
}

template <int NZ>
double stencil7_fixed(Block& block, int var, std::span<double> scratch) {
  static_assert(NZ % LaneSum::kLanes == 0 && LaneSum::kLanes == 8);
  const BlockShape& s = block.shape();
  assert(s.nz == NZ);
  constexpr std::ptrdiff_t r = NZ + 2;
  const auto plane = static_cast<std::ptrdiff_t>(s.plane());
  const int nx = s.nx, ny = s.ny;
  const std::size_t dense = std::size_t(ny) * NZ;
  assert(scratch.size() >= 2 * dense);
  double* u = block.var(var).data();
  double* buf[2] = {scratch.data(), scratch.data() + dense};
  const v2d seven = {7.0, 7.0};
  v2d lane[4] = {{0, 0}, {0, 0}, {0, 0}, {0, 0}};
  for (int i = 1; i <= nx + 1; ++i) {
    if (i <= nx) {
      const double* c = u + i * plane + r + 1;  // cell (i,1,1)
      double* o = buf[i & 1];
      for (int j = 0; j < ny; ++j, c += r, o += NZ) {
        for (int k = 0; k < NZ; k += 2) {
          const v2d v = (load2(c - plane + k) + load2(c + k - r) + load2(c + k - 1) + load2(c + k) +
                         load2(c + k + 1) + load2(c + k + r) + load2(c + plane + k)) /
                        seven;
          store2(o + k, v);
          lane[(k / 2) % 4] += v;
        }
      }
    }
    if (i > 1) {  // old plane i-1 has no readers left: write its new values back
      const double* o = buf[(i - 1) & 1];
      double* d = u + (i - 1) * plane + r + 1;
      for (int j = 0; j < ny; ++j, d += r, o += NZ)
        for (int k = 0; k < NZ; k += 2) store2(d + k, load2(o + k));
    }
  }
  return ((lane[0][0] + lane[0][1]) + (lane[1][0] + lane[1][1])) +
         ((lane[2][0] + lane[2][1]) + (lane[3][0] + lane[3][1]));
}
#endif

}  // namespace

double stencil7(Block& block, int var, std::span<double> scratch) {
#ifdef MINIAMR_STENCIL7_FIXED
  // Rows of 8 and 16 cells (blocks that live in L1/L2); longer rows keep the generic sweep,
  // whose plane copies and write prefetch measured faster from 32 on.
  switch (block.shape().nz) {
    case 8:
      return stencil7_fixed<8>(block, var, scratch);
    case 16:
      return stencil7_fixed<16>(block, var, scratch);
    default:
      break;
  }
#endif
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
