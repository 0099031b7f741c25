// In-place stencil sweep without a work-array copy-back. Output plane i is written straight
// into the block; the only old values it would destroy that are still needed are plane i itself
// (for rows j+-1 and k+-1) and plane i-1 (already overwritten, needed as the x-1 neighbour).
// So before plane i is overwritten it is copied into one of two plane-sized scratch buffers
// (an L1-resident copy), and the previous one serves as plane i-1. Memory traffic is one read
// and one write per cell, and the fused LaneSum returns the new interior sum in the same pass.
//
// The sweep also prefetches (for writing) the plane kPrefetchPlanes ahead, spread over the rows
// of the current plane: with short rows (16 cells) the hardware prefetcher alone left the loop
// waiting on memory (17 -> 25 GB/s single core on a 16^3 x 40 mesh, measured).
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <span>

#include "stencil/block.hpp"
#include "stencil/lane_sum.hpp"

namespace miniamr::stencil {

// A hint only: no effect on results, and compilers without the builtin just skip it.
inline void prefetch_for_write(const double* p) {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}

inline constexpr int kPrefetchPlanes = 4;

// One plane of scratch, padded to a cache line.
inline std::size_t padded_plane(const BlockShape& s) {
  return (s.plane() + 7) / 8 * 8;
}

// Doubles of scratch any stencil call needs: three padded planes (sweep_planes uses two,
// sweep_plane_sums three).
inline std::size_t stencil_scratch_size(const BlockShape& s) {
  return 3 * padded_plane(s);
}

// Issues the prefetches of row j's share of the plane at offset `ahead` (see above).
inline void prefetch_share(double* u, std::size_t var_offset, std::size_t total, std::size_t ahead,
                           int j, std::size_t lines_per_row) {
  for (std::size_t l = 0; l < lines_per_row; ++l) {
    const std::size_t pf = ahead + (std::size_t(j - 1) * lines_per_row + l) * 8;
    if (var_offset + pf < total) prefetch_for_write(u + pf);
  }
}

// Calls row(out, w, c, e) for every interior row (i,j): `out` points at cell (i,j,0) in the
// block, w/c/e at the OLD cell (i-1,j,0), (i,j,0), (i+1,j,0); rows j+-1 are at +-row() from
// each of w/c/e. row() writes out[1..nz]. Returns the sum of the new interior values.
template <class RowFn>
double sweep_planes(Block& block, int var, std::span<double> scratch, RowFn&& row) {
  const BlockShape& s = block.shape();
  assert(scratch.size() >= stencil_scratch_size(s));
  const std::size_t plane = s.plane(), stride_r = s.row();
  double* u = block.var(var).data();
  // Prefetch window: the plane kPrefetchPlanes ahead (running on into the next variable, which
  // follows in memory), kept inside the block's allocation.
  const std::size_t lines_per_row = (plane / 8 + std::size_t(s.ny)) / std::size_t(s.ny);
  const std::size_t var_offset = std::size_t(var) * s.var_stride();
  double* saved[2] = {scratch.data(), scratch.data() + padded_plane(s)};
  LaneSum sum;
  const double* w = u;  // the ghost plane 0 is never written, so it serves as plane i-1 for i=1
  for (int i = 1; i <= s.nx; ++i) {
    double* c = saved[i & 1];
    double* out_plane = u + std::size_t(i) * plane;
    std::copy_n(out_plane, plane, c);
    const double* e = out_plane + plane;
    const std::size_t ahead = std::size_t(i + kPrefetchPlanes) * plane;
    for (int j = 1; j <= s.ny; ++j) {
      const std::size_t r = std::size_t(j) * stride_r;
      prefetch_share(u, var_offset, s.doubles(), ahead, j, lines_per_row);
      row(out_plane + r, w + r, c + r, e + r);
      sum.add_row(out_plane + r + 1, s.nz);
    }
    w = c;
  }
  return sum.total();
}

// Sweep for stencils that combine per-plane partial results, like the 27-point one:
// new(i,j,k) = combine(Q[i-1], Q[i], Q[i+1]) at (j,k), where Q[x] = plane_fn applied to OLD
// plane x. Each Q[x] is computed once (not three times) into a ring of three scratch planes,
// always before plane x is overwritten, so no old-plane copies are needed.
//   plane_fn(q, p): for every interior (j,k), q[j*row + k] = f(p around (j,k)), where p points
//                   at cell (x,0,0) of the block and q at the matching cell of a scratch plane.
//   combine(out, a, b, c): out[1..nz] of one row from rows a, b, c of Q[i-1], Q[i], Q[i+1].
template <class PlaneFn, class CombineFn>
double sweep_plane_sums(Block& block, int var, std::span<double> scratch, PlaneFn&& plane_fn,
                        CombineFn&& combine) {
  const BlockShape& s = block.shape();
  assert(scratch.size() >= stencil_scratch_size(s));
  const std::size_t plane = s.plane(), stride_r = s.row();
  double* u = block.var(var).data();
  const std::size_t lines_per_row = (plane / 8 + std::size_t(s.ny)) / std::size_t(s.ny);
  const std::size_t var_offset = std::size_t(var) * s.var_stride();
  double* q[3] = {scratch.data(), scratch.data() + padded_plane(s),
                  scratch.data() + 2 * padded_plane(s)};
  plane_fn(q[0], u);
  plane_fn(q[1], u + plane);
  LaneSum sum;
  for (int i = 1; i <= s.nx; ++i) {
    double* out_plane = u + std::size_t(i) * plane;
    plane_fn(q[(i + 1) % 3], out_plane + plane);  // Q[i+1] from the still-old plane i+1
    const double* qa = q[(i - 1) % 3];
    const double* qb = q[i % 3];
    const double* qc = q[(i + 1) % 3];
    const std::size_t ahead = std::size_t(i + kPrefetchPlanes) * plane;
    for (int j = 1; j <= s.ny; ++j) {
      const std::size_t r = std::size_t(j) * stride_r;
      prefetch_share(u, var_offset, s.doubles(), ahead, j, lines_per_row);
      combine(out_plane + r, qa + r, qb + r, qc + r);
      sum.add_row(out_plane + r + 1, s.nz);
    }
  }
  return sum.total();
}

}  // namespace miniamr::stencil
