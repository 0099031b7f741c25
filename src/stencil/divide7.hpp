// Division by 7 of a row of doubles for the 7-point kernels of the wider instruction-set
// variants (stencil_kernels.cpp) and the compact sweep (compact_stencil.cpp; test_stencil_compact
// checks its plain path too). Internal to the stencil layer.
#pragma once

#include "stencil/isa_variants.hpp"

#ifdef MINIAMR_ISA_VARIANTS
#include <immintrin.h>
#endif

namespace miniamr::stencil {

#if defined(__GNUC__) || defined(__clang__)
// Four doubles (two SSE2 registers, one AVX2 register) and eight (one AVX-512 register).
using v4d = double __attribute__((vector_size(32)));
using v8d = double __attribute__((vector_size(64)));
#endif

// The 7-point kernels of the wider instruction-set variants (kernel_set.hpp) divide by 7
// without a division instruction, whose throughput (one four-lane division per four updates)
// bounded it: q = x * RN(1/7), the remainder x - 7q exactly by one fused multiply-add, and
// q + remainder * RN(1/7) rounded once. For a quotient q within one ulp, which x * RN(1/7) is,
// this is the correctly rounded x / 7 (Markstein's theorem; Muller et al., Handbook of
// Floating-Point Arithmetic, 2nd ed., section 4.7), so results are bitwise those of the
// division; test_stencil_kernel_set checks it on every variant, and the theorem's assumption
// of no underflow is kept by dividing the rare vectors with a quotient near zero, infinite or
// NaN the plain way. BM_Stencil7 8^3 and 16^3: 0.84 and 0.81 of the time with the division.
// The generic rows and the 27-point combine keep the division: four-double rows with this
// quotient ran them 1.15-1.3x slower than the compiler's vectorised division loops.
#ifdef MINIAMR_ISA_VARIANTS
namespace avx2 {
// Rows of four doubles, one register (eight ran 3.3x slower in AVX2 registers).
struct Divide7 {
  using Vector = v4d;
  [[gnu::target("arch=x86-64-v3")]] void operator()(v4d& x) const {
    const __m256d d = _mm256_set1_pd(7.0), inv = _mm256_set1_pd(1.0 / 7.0);
    const __m256d q = _mm256_mul_pd(x, inv);
    const __m256d rest = _mm256_fnmadd_pd(q, d, x);
    const __m256d quotient = _mm256_fmadd_pd(rest, inv, q);
    const __m256d magnitude = _mm256_andnot_pd(_mm256_set1_pd(-0.0), quotient);
    const __m256d normal = _mm256_cmp_pd(magnitude, _mm256_set1_pd(0x1p-960), _CMP_GE_OQ);
    x = _mm256_movemask_pd(normal) == 0xF ? v4d(quotient) : x / v4d(d);
  }
};
}  // namespace avx2
namespace avx512 {
// Rows of eight doubles, one register: the same quotient, lanes and sums as four at a time.
struct Divide7 {
  using Vector = v8d;
  [[gnu::target("arch=x86-64-v4")]] void operator()(v8d& x) const {
    const __m512d d = _mm512_set1_pd(7.0), inv = _mm512_set1_pd(1.0 / 7.0);
    const __m512d q = _mm512_mul_pd(x, inv);
    const __m512d rest = _mm512_fnmadd_pd(q, d, x);
    const __m512d quotient = _mm512_fmadd_pd(rest, inv, q);
    const __mmask8 normal =
        _mm512_cmp_pd_mask(_mm512_abs_pd(quotient), _mm512_set1_pd(0x1p-960), _CMP_GE_OQ);
    x = normal == 0xFF ? v8d(quotient) : x / v8d(d);
  }
};
}  // namespace avx512
#endif

}  // namespace miniamr::stencil
