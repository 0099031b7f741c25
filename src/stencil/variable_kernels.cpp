#include "stencil/variable_kernels.hpp"

#include <cassert>
#include <cmath>

#include "stencil/hash.hpp"
#include "stencil/isa_variants.hpp"
#include "stencil/lane_sum.hpp"
#include "stencil/plane_sweep.hpp"
#include "stencil/stencil_rows.hpp"

namespace miniamr::stencil {

namespace {

// Keeps values of the non-conservative kernels bounded; written with selects so the k loops
// stay branch-free and vectorise.
struct Clamp {
  double big_shift;    // a1 + a0[0]
  double small_scale;  // 10 - a1
  double operator()(double x) const {
    x = std::fabs(x);
    x = x >= 1.0 ? x / (big_shift + x) : x;
    return x < 0.1 ? x * small_scale : x;
  }
};

double mix(Block& block, int var, double a1, double m, const Clamp& clamp) {
  const BlockShape& s = block.shape();
  const int g = var / 4;
  double* __restrict__ u = block.var(var).data();
  const double* __restrict__ p1 = block.var(4 * g + (var + 1) % 4).data();
  const double* __restrict__ p2 = block.var(4 * g + (var + 2) % 4).data();
  const double b = 1.0 - a1;
  LaneSum sum;
  for (int i = 1; i <= s.nx; ++i)
    for (int j = 1; j <= s.ny; ++j) {
      const std::size_t o = s.at(i, j, 0);
      for (int k = 1; k <= s.nz; ++k) {
        const double c = u[o + k];
        u[o + k] = clamp(a1 * c + m * p1[o + k] * p2[o + k] + b * c * c);
      }
      sum.add_row(u + o + 1, s.nz);
    }
  return sum.total();
}

// 3-point non-linear kernel along the axis whose neighbours sit at l[k] and r[k].
inline void line(double* __restrict__ out, const double* __restrict__ l,
                 const double* __restrict__ c, const double* __restrict__ r, int nz, double m,
                 const Clamp& clamp) {
  for (int k = 1; k <= nz; ++k)
    out[k] = clamp((l[k] + c[k] + r[k]) / 3.0 + m * (l[k] - c[k]) * (r[k] - c[k]));
}

}  // namespace

VariableCoeffs make_variable_coeffs(int num_vars, std::uint64_t seed) {
  VariableCoeffs co;
  const std::uint64_t base = hash_combine(splitmix64(seed), 0xC0EFFull);
  co.a1 = to_unit(hash_combine(base, 0));
  co.a0.resize(std::size_t(num_vars / 4));
  for (std::size_t g = 0; g < co.a0.size(); ++g) co.a0[g] = to_unit(hash_combine(base, g + 1));
  return co;
}

VariableKernel variable_kernel(int num_vars, int var, std::int64_t calc_stage) {
  const int mat = num_vars / 4;
  if (var == 0 || var >= 4 * mat) return VariableKernel::kSevenPoint;
  switch (((calc_stage % 6) + 6) % 6) {
    case 0:
      return VariableKernel::kMix;
    case 1:
      return VariableKernel::kLineX;
    case 2:
      return VariableKernel::kLineY;
    case 3:
      return VariableKernel::kLineZ;
    case 4:
      return VariableKernel::kWeighted7;
    default:
      return VariableKernel::kPlain27;
  }
}

double stencil_variable(Block& block, int var, std::int64_t calc_stage,
                        const VariableCoeffs& coeffs, std::span<double> scratch) {
  const BlockShape& s = block.shape();
  const auto r = static_cast<std::ptrdiff_t>(s.row());
  const int nz = s.nz;
  const VariableKernel kernel = variable_kernel(s.num_vars, var, calc_stage);
  if (kernel == VariableKernel::kSevenPoint) {
    return sweep_planes(block, var, scratch,
                        [r, nz](double* out, const double* w, const double* c, const double* e) {
                          rows::seven_point(out, w, c, e, r, nz);
                        });
  }
  assert(std::size_t(var / 4) < coeffs.a0.size());
  const double a1 = coeffs.a1;
  const double m = coeffs.a0[std::size_t(var / 4)];
  const Clamp clamp{a1 + coeffs.a0[0], 10.0 - a1};
  switch (kernel) {
    case VariableKernel::kMix:
      return mix(block, var, a1, m, clamp);
    case VariableKernel::kLineX:
      return sweep_planes(block, var, scratch,
                          [&](double* out, const double* w, const double* c, const double* e) {
                            line(out, w, c, e, nz, m, clamp);
                          });
    case VariableKernel::kLineY:
      return sweep_planes(block, var, scratch,
                          [&](double* out, const double*, const double* c, const double*) {
                            line(out, c - r, c, c + r, nz, m, clamp);
                          });
    case VariableKernel::kLineZ:
      return sweep_planes(block, var, scratch,
                          [&](double* out, const double*, const double* c, const double*) {
                            line(out, c - 1, c, c + 1, nz, m, clamp);
                          });
    case VariableKernel::kWeighted7: {
      const double wc = 1.0 + a1, wn = 1.0 + m, den = wc + 6.0 * wn;
      return sweep_planes(block, var, scratch,
                          [&](double* __restrict__ out, const double* __restrict__ w,
                              const double* __restrict__ c, const double* __restrict__ e) {
                            for (int k = 1; k <= nz; ++k) {
                              const double nb =
                                  w[k] + c[k - r] + c[k - 1] + c[k + 1] + c[k + r] + e[k];
                              out[k] = clamp((wc * c[k] + wn * nb) / den);
                            }
                          });
    }
    case VariableKernel::kPlain27:
    default: {
      const int ny = s.ny;
      return sweep_plane_sums(
          block, var, scratch,
          [r, ny, nz](double* q, const double* p) { rows::plane_sums9(q, p, r, ny, nz); },
          [&](double* __restrict__ out, const double* __restrict__ qa,
              const double* __restrict__ qb, const double* __restrict__ qc) {
            for (int k = 1; k <= nz; ++k) out[k] = clamp((qa[k] + qb[k] + qc[k]) / 27.0);
          });
    }
  }
}

// The instruction-set variants (kernel_set.hpp).
#define MINIAMR_VARIABLE_VARIANTS(ns, tgt)                                                       \
  MINIAMR_KERNEL_VARIANT(                                                                        \
      ns, target, double, stencil_variable,                                                      \
      (Block & b, int v, std::int64_t stage, const VariableCoeffs& coeffs, std::span<double> s), \
      (b, v, stage, coeffs, s))
MINIAMR_FOR_EACH_WIDER_ISA(MINIAMR_VARIABLE_VARIANTS)

}  // namespace miniamr::stencil
