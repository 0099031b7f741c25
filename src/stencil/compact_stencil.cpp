#include "stencil/compact_stencil.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>

#include "stencil/divide7.hpp"
#include "stencil/isa_variants.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::stencil {

namespace {

#ifdef MINIAMR_ISA_VARIANTS
// The AVX-512 7-point kernel's division (divide7.hpp).
[[gnu::target("arch=x86-64-v4")]] inline __m512d divide7(__m512d x) {
  v8d v = x;
  avx512::Divide7{}(v);
  return v;
}

// In place, as the padded kernel: the rows j-1, j and j+1 of plane i in registers, each old
// plane kept in `saved` (two planes of 64) as plane i+1's x-1 neighbour.
[[gnu::target("arch=x86-64-v4")]] double sweep(double* u, const GhostLayers& layers,
                                               double* saved) {
  constexpr __mmask8 kAll = 0xFF;  // maskz forms: GCC 12's unmasked alignr warns
  constexpr int n = kCompactN;
  // The layers in locals: the vector stores below may alias anything, so members would be
  // read again at every row.
  const std::array<GhostLayer, 6> L = layers.face;
  assert(L[0].sc == 1 && L[1].sc == 1 && L[2].sc == 1 && L[3].sc == 1);  // rows along k
  const bool copies = layers.copies();
  __m512d lanes = _mm512_setzero_pd();
  for (int i = 0; i < n; ++i) {
    // Old plane i-1: the x- layer for the first plane, then the kept copy.
    const double* w = i == 0 ? L[0].first : saved + ((i - 1) & 1) * 64;
    const std::ptrdiff_t ws = i == 0 ? L[0].sb : 8;
    // Old plane i+1 (not yet swept), or the x+ layer after the last plane.
    const double* e = i + 1 < n ? u + (i + 1) * 64 : L[1].first;
    const std::ptrdiff_t es = i + 1 < n ? 8 : L[1].sb;
    double* c = u + i * 64;
    double* keep = saved + (i & 1) * 64;
    const double* z_low = L[4].first + i * L[4].sb;
    const double* z_high = L[5].first + i * L[5].sb;
    __m512d below = _mm512_loadu_pd(L[2].first + i * L[2].sb);  // y- ghosts of plane i
    __m512d here = _mm512_load_pd(c);
    for (int j = 0; j < n; ++j) {
      const __m512d above =
          j + 1 < n ? _mm512_load_pd(c + (j + 1) * 8) : _mm512_loadu_pd(L[3].first + i * L[3].sb);
      // k-1 and k+1: the row shifted by one lane, the z ghost shifted in.
      const __m512i h = _mm512_castpd_si512(here);
      const __m512i lo = _mm512_castpd_si512(_mm512_set1_pd(z_low[j * L[4].sc]));
      const __m512i hi = _mm512_castpd_si512(_mm512_set1_pd(z_high[j * L[5].sc]));
      const __m512d left = _mm512_castsi512_pd(_mm512_maskz_alignr_epi64(kAll, h, lo, 7));
      const __m512d right = _mm512_castsi512_pd(_mm512_maskz_alignr_epi64(kAll, hi, h, 1));
      // rows::seven_point's order: w, c[k-r], c[k-1], c[k], c[k+1], c[k+r], e.
      __m512d v = _mm512_add_pd(_mm512_loadu_pd(w + j * ws), below);
      v = _mm512_add_pd(_mm512_add_pd(_mm512_add_pd(v, left), here), right);
      v = divide7(_mm512_add_pd(_mm512_add_pd(v, above), _mm512_loadu_pd(e + j * es)));
      lanes = _mm512_add_pd(lanes, v);  // LaneSum's lanes: cell k into lane k
      _mm512_storeu_pd(keep + j * 8, here);
      _mm512_store_pd(c + j * 8, v);
      below = here;
      here = above;
    }
    if (copies) copy_out_plane(layers.copy, i + 1, keep, n, n, n);
  }
  alignas(64) double a[8];
  _mm512_store_pd(a, lanes);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}
#endif

// The interior of a padded variable from or into a compact one, row by row: where AVX-512 is
// missing (tests and benchmarks; the runtime sweeps compact only at x86-64-v4). Eight assignments
// rather than a copy call: the compiler makes them two or four vector moves, where a call per
// row of eight cost as much as the copy.
template <bool kToCompact>
void copy_interior(const BlockShape& s, const double* from, double* to) {
  for (int i = 0; i < kCompactN; ++i)
    for (int j = 0; j < kCompactN; ++j) {
      const std::size_t padded = s.at(i + 1, j + 1, 1);
      const std::size_t compact = std::size_t(i * kCompactN + j) * kCompactN;
      const double* f = from + (kToCompact ? padded : compact);
      double* t = to + (kToCompact ? compact : padded);
      t[0] = f[0], t[1] = f[1], t[2] = f[2], t[3] = f[3];
      t[4] = f[4], t[5] = f[5], t[6] = f[6], t[7] = f[7];
    }
}

#ifdef MINIAMR_ISA_VARIANTS
// The same in eight-double vectors: a row a load and a store (the compact side aligned).
template <bool kToCompact>
[[gnu::target("arch=x86-64-v4")]] void copy_interior_avx512(const BlockShape& s, const double* from,
                                                            double* to) {
  for (int i = 0; i < kCompactN; ++i)
    for (int j = 0; j < kCompactN; ++j) {
      const std::size_t padded = s.at(i + 1, j + 1, 1);
      const std::size_t compact = std::size_t(i * kCompactN + j) * kCompactN;
      if constexpr (kToCompact)
        _mm512_store_pd(to + compact, _mm512_loadu_pd(from + padded));
      else
        _mm512_storeu_pd(to + padded, _mm512_load_pd(from + compact));
    }
}
#endif

template <bool kToCompact>
void copy_interior_fastest(const BlockShape& s, const double* from, double* to, bool wide) {
#ifdef MINIAMR_ISA_VARIANTS
  if (wide) return copy_interior_avx512<kToCompact>(s, from, to);
#endif
  copy_interior<kToCompact>(s, from, to);
}

}  // namespace

bool compact_stencil7_supported() {
#ifdef MINIAMR_ISA_VARIANTS
  return isa_supported(Isa::kAvx512);
#else
  return false;
#endif
}

double compact_stencil7([[maybe_unused]] double* u, [[maybe_unused]] const GhostLayers& layers,
                        [[maybe_unused]] std::span<double> scratch) {
  assert(compact_stencil7_supported());
  assert(reinterpret_cast<std::uintptr_t>(u) % 64 == 0 && scratch.size() >= 128);
#ifdef MINIAMR_ISA_VARIANTS
  return sweep(u, layers, scratch.data());
#else
  return 0.0;
#endif
}

void CompactVars::reserve(std::size_t blocks, VarRange vars) {
  assert(!loaded_);
  vars_ = vars;
  const std::size_t need = blocks * std::size_t(vars.count()) * kCompactCells;
  if (need > capacity_) {
    storage_ = aligned_doubles(need);
    capacity_ = need;
  }
  base_ = storage_.get();
  loaded_ = true;
}

void CompactVars::load_block(const Block& block, std::size_t b) {
  const bool wide = compact_stencil7_supported();
  for (int v = vars_.v0; v < vars_.v1; ++v)
    copy_interior_fastest<true>(block.shape(), block.var(v).data(), var(b, v), wide);
}

void CompactVars::store_block(Block& block, std::size_t b) const {
  const bool wide = compact_stencil7_supported();
  for (int v = vars_.v0; v < vars_.v1; ++v)
    copy_interior_fastest<false>(block.shape(), var(b, v), block.var(v).data(), wide);
}

void CompactVars::load(std::span<const Block> blocks, VarRange vars) {
  reserve(blocks.size(), vars);
  for (std::size_t b = 0; b < blocks.size(); ++b) load_block(blocks[b], b);
}

void CompactVars::store(std::span<Block> blocks) {
  assert(loaded_);
  for (std::size_t b = 0; b < blocks.size(); ++b) store_block(blocks[b], b);
  forget();
}

}  // namespace miniamr::stencil
