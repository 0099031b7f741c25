#include "stencil/stencil_kernels.hpp"

#include <algorithm>
#include <cassert>
#include <cstddef>

#include "stencil/divide7.hpp"
#include "stencil/isa_variants.hpp"
#include "stencil/lane_sum.hpp"
#include "stencil/stencil_rows.hpp"

namespace miniamr::stencil {

namespace {

// 7-point sweep for rows of a compile-time length NZ (a multiple of LaneSum::kLanes), the common
// small-block case, in place. Rows j-1, j and j+1 of plane i are carried in registers from one
// row to the next, so each old row is loaded once as a neighbour row; when row j's new values
// are stored over it, its old values (already in registers) go to a dense scratch plane (ny
// rows of NZ), where plane i+1 reads them as its x-1 neighbour. Per four updates: five loads
// and two stores, no copy of a whole padded plane and no write-back pass. The rows are written with
// vectors of the GNU vector extension, the variant's `Divide::Vector`: four doubles in the
// baseline (two SSE2 registers) and AVX2 (one register; eight-double vectors ran it 3.3x
// slower), eight in AVX-512, one register (BM_Stencil7 8^3 and 16^3, 40 variables: 0.77x and
// 0.70x the time of four, once the division no longer bounded it); the auto-vectoriser leaves
// the fully unrolled rows scalar. Every lane does the additions of rows::seven_point in the
// same order, and the accumulators hold LaneSum's lanes (cell k of a row into lane k % 8: 0-3
// and 4-7, or 0-7), combined as LaneSum::total() does, so values and the returned sum are
// bitwise those of the generic sweep.
#if defined(__GNUC__) || defined(__clang__)
#define MINIAMR_STENCIL7_FIXED 1
// The same vector at any double's address (rows are not 32-byte aligned). Accessed through a
// pointer rather than load/store functions: a function taking or returning a vector would have
// a different ABI in the wider variants.
using v4d_unaligned = double __attribute__((vector_size(32), aligned(8), may_alias));

// Eight doubles, one AVX-512 register: the AVX-512 variant's rows.
using v8d_unaligned = double __attribute__((vector_size(64), aligned(8), may_alias));

template <class V>
struct Unaligned;
template <>
struct Unaligned<v4d> {
  using type = v4d_unaligned;
};
template <>
struct Unaligned<v8d> {
  using type = v8d_unaligned;
};

// A vector of type V at p.
template <class V>
inline const typename Unaligned<V>::type& at(const double* p) {
  return *reinterpret_cast<const typename Unaligned<V>::type*>(p);
}
template <class V>
inline typename Unaligned<V>::type& at(double* p) {
  return *reinterpret_cast<typename Unaligned<V>::type*>(p);
}

// The baseline's division: four lanes of x / 7.0.
struct DivideBy7 {
  using Vector = v4d;
  void operator()(v4d& x) const {
    const v4d seven = {7.0, 7.0, 7.0, 7.0};
    x = x / seven;
  }
};

template <int NZ, class Divide>
double stencil7_fixed(Block& block, int var, const GhostLayers& layers, std::span<double> scratch,
                      Divide divide) {
  static_assert(NZ % LaneSum::kLanes == 0 && LaneSum::kLanes == 8);
  using V = typename Divide::Vector;  // the variant's rows: four or eight doubles
  constexpr int kW = int(sizeof(V) / sizeof(double));
  constexpr int kAcc = LaneSum::kLanes / kW;  // accumulators for LaneSum's eight lanes
  const BlockShape& s = block.shape();
  assert(s.nz == NZ);
  constexpr std::ptrdiff_t r = NZ + 2;
  const auto plane = static_cast<std::ptrdiff_t>(s.plane());
  const int nx = s.nx, ny = s.ny;
  const std::size_t dense = std::size_t(ny) * NZ;
  assert(scratch.size() >= 2 * dense);
  double* u = block.var(var).data();
  const auto& L = layers.face;
  double* saved[2] = {scratch.data(), scratch.data() + dense};
  V lane[kAcc] = {};  // LaneSum's lanes: 0-3 and 4-7, or 0-7
  constexpr int kV = NZ / kW;
  // x and y faces are read through their layers' rows (contiguous along z); z ghosts read
  // from another layer are copied into the block's own, two per row, a plane ahead of its
  // sweep: the rows are loaded right after anyway (where a z face filled before the sweep
  // touches one line per row on its own), and the copies have left the store buffer by the
  // time the row's shifted loads read them.
  assert(L[0].sc == 1 && L[1].sc == 1 && L[2].sc == 1 && L[3].sc == 1);
  const bool z_own[2] = {L[4].first == u + plane + r, L[5].first == u + plane + r + NZ + 1};
  const auto copy_z_ghosts = [&](int i) {
    for (int side = 0; side < 2; ++side) {
      if (z_own[side]) continue;
      const GhostLayer& from = L[4 + side];
      const double* f = from.first + (i - 1) * from.sb;  // the ghost of row (i,1) and on
      double* to = u + i * plane + r + (side == 0 ? 0 : NZ + 1);
      for (int j = 0; j < ny; ++j) to[j * r] = f[j * from.sc];
    }
  };
  copy_z_ghosts(1);
  // The layers copied out for later readers (GhostLayers::copy), from each old plane as it is
  // kept: a pack before the sweep would have been a pass of its own over the block.
  const bool copies = layers.copies();
  // Old plane i-1: the x- layer for i = 1 (never written), then the saved copy.
  const double* w = L[0].first;
  std::ptrdiff_t wr = L[0].sb;
  for (int i = 1; i <= nx; ++i) {
    double* c = u + i * plane + r + 1;  // cell (i,1,1)
    // Old plane i+1 (not yet swept), or the x+ layer after the last plane.
    const double* e = i < nx ? c + plane : L[1].first;
    const std::ptrdiff_t er = i < nx ? r : L[1].sb;
    if (i < nx) copy_z_ghosts(i + 1);
    const double* top = L[3].first + (i - 1) * L[3].sb;  // y+ ghosts of plane i
    double* keep = saved[i & 1];
    V below[kV], here[kV], above[kV];
    for (int q = 0; q < kV; ++q) {
      below[q] = at<V>(L[2].first + (i - 1) * L[2].sb + kW * q);  // y- ghosts of plane i
      here[q] = at<V>(c + kW * q);
    }
    for (int j = 0; j < ny; ++j, c += r, e += er, w += wr, keep += NZ) {
      const double* up = j + 1 < ny ? c + r : top;
      for (int q = 0; q < kV; ++q) above[q] = at<V>(up + kW * q);
      V v[kV];
      for (int q = 0; q < kV; ++q) {
        const int k = kW * q;
        v[q] = at<V>(w + k) + below[q] + at<V>(c + k - 1) + here[q] + at<V>(c + k + 1) + above[q] +
               at<V>(e + k);
        divide(v[q]);
        lane[q % kAcc] += v[q];
      }
      // Row j's old values are still needed by plane i+1 (kept) and row j+1 (below): only
      // now, with every shifted load of the row done, are they overwritten.
      for (int q = 0; q < kV; ++q) {
        at<V>(keep + kW * q) = here[q];
        at<V>(c + kW * q) = v[q];
        below[q] = here[q];
        here[q] = above[q];
      }
    }
    if (copies) copy_out_plane(layers.copy, i, saved[i & 1], nx, ny, NZ);
    w = saved[i & 1];
    wr = NZ;
  }
  double l[LaneSum::kLanes];
  for (int a = 0; a < kAcc; ++a)
    for (int k = 0; k < kW; ++k) l[a * kW + k] = lane[a][k];
  return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}
#else
struct DivideBy7 {};  // no fixed-row kernel: the generic sweep divides in its rows
#endif

// The 7-point stencil with the fixed-row kernel's division supplied by the caller (each
// instruction-set variant passes its own).
template <class Divide>
double stencil7_with([[maybe_unused]] Divide divide, Block& block, int var,
                     const GhostLayers& layers, std::span<double> scratch) {
#ifdef MINIAMR_STENCIL7_FIXED
  // Rows of 8 and 16 cells (blocks that live in L1/L2); longer rows keep the generic sweep,
  // whose plane copies and write prefetch measured faster from 32 on.
  switch (block.shape().nz) {
    case 8:
      return stencil7_fixed<8>(block, var, layers, scratch, divide);
    case 16:
      return stencil7_fixed<16>(block, var, layers, scratch, divide);
    default:
      break;
  }
#endif
  // The generic sweep reads ghosts only: layers read from elsewhere are copied in first, and
  // layers to copy out are copied before it starts.
  copy_out_layers(block, var, layers);
  copy_ghost_layers(block, var, layers);
  const auto r = static_cast<std::ptrdiff_t>(block.shape().row());
  const int nz = block.shape().nz;
  return sweep_planes(block, var, scratch,
                      [r, nz](double* out, const double* w, const double* c, const double* e) {
                        rows::seven_point(out, w, c, e, r, nz);
                      });
}

}  // namespace

double stencil7(Block& block, int var, std::span<double> scratch) {
  return stencil7_from(block, var, own_ghost_layers(block, var), scratch);
}

double stencil7_from(Block& block, int var, const GhostLayers& layers, std::span<double> scratch) {
  return stencil7_with(DivideBy7{}, block, var, layers, scratch);
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

// The instruction-set variants (kernel_set.hpp) divide by 7 without a division instruction
// (divide7.hpp).

// Each variant's 7-point kernels with its own Divide7.
#define MINIAMR_STENCIL_VARIANTS(ns, tgt)                                                     \
  namespace ns {                                                                              \
  double stencil7(Block& b, int v, std::span<double> s) {                                     \
    return stencil7_with(Divide7{}, b, v, own_ghost_layers(b, v), s);                         \
  }                                                                                           \
  double stencil7_from(Block& b, int v, const GhostLayers& l, std::span<double> s) {          \
    return stencil7_with(Divide7{}, b, v, l, s);                                              \
  }                                                                                           \
  }                                                                                           \
  MINIAMR_KERNEL_VARIANT(ns, tgt, double, stencil27, (Block & b, int v, std::span<double> s), \
                         (b, v, s))
MINIAMR_FOR_EACH_WIDER_ISA(MINIAMR_STENCIL_VARIANTS)

}  // namespace miniamr::stencil
