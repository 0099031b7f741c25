// Exact summation of doubles, so global checksums cannot depend on rank count, block order or
// reduction tree (the reference's sums change with the decomposition, spec §6.7).
//
// The accumulator is a fixed-point number covering the whole double range: limb i holds a
// signed digit of weight 2^(32*i - 1088), so bit 2^-1074 (the smallest subnormal) falls in
// limb 0, and 68 limbs reach 2^1088 with a signed 64-bit top digit on top: room for far more
// than 2^64 maximal doubles. A double adds its 53-bit mantissa to at most three limbs with no
// carry; the 64-bit limbs absorb 2^29 additions before normalize() must propagate carries
// (done automatically). After normalize(), limbs 0..66 lie in [0, 2^32) and the top limb
// carries the sign, so MPI can add the limbs of up to 2^30 ranks with MPI_SUM on MPI_INT64_T,
// no carries involved. One extra trailing limb counts non-finite inputs (inf/NaN): if it is
// non-zero, value() is NaN.
//
// MPI use:   auto l = acc.limbs();  // normalised, marked for renormalisation on next use
//            MPI_Allreduce(MPI_IN_PLACE, l.data(), int(l.size()), MPI_INT64_T, MPI_SUM, comm);
//            double total = acc.value();
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace miniamr::stencil {

class ExactSum {
 public:
  static constexpr int kValueLimbs = 68;
  static constexpr int kLimbs = kValueLimbs + 1;  // + the non-finite counter

  void add(double x);
  void merge(const ExactSum& other);

  // Carry propagation to the canonical form described above.
  void normalize();

  // All kLimbs limbs. The mutable overload normalises first and lets a reduction overwrite them
  // in place (with the sum of canonical forms); the next add/merge renormalises. The const
  // overload shows the limbs as stored: canonical only right after normalize().
  std::span<std::int64_t, kLimbs> limbs();
  std::span<const std::int64_t, kLimbs> limbs() const { return limbs_; }

  // The exact total rounded to nearest, ties to even (+-inf past the double range, NaN if any
  // input was not finite). An exact zero gives +0.0.
  double value() const;

  void clear() { *this = ExactSum{}; }

 private:
  // Additions (each moving a limb by < 2^33) allowed before carries must be propagated.
  static constexpr std::int64_t kMaxPending = std::int64_t{1} << 29;

  std::array<std::int64_t, kLimbs> limbs_{};
  std::int64_t pending_ = 0;  // additions since the last normalize()
};

}  // namespace miniamr::stencil
