#include "stencil/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace miniamr::stencil {

namespace {

constexpr int kBias = 1088;  // limb i has weight 2^(32 i - kBias)
constexpr std::int64_t kDigit = std::int64_t{1} << 32;
constexpr std::uint64_t kMask32 = 0xFFFFFFFFull;

}  // namespace

void ExactSum::add(double x) {
  if (pending_ >= kMaxPending) normalize();
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const auto biased = static_cast<int>((bits >> 52) & 0x7FF);
  std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {  // inf or NaN
    ++limbs_[kValueLimbs];
    return;
  }
  if (biased != 0) mant |= std::uint64_t{1} << 52;
  if (mant == 0) return;
  // x = +-mant * 2^(exp), exp >= -1074; position of mant's bit 0 above the accumulator's.
  const int exp = biased == 0 ? -1074 : biased - 1075;
  const int pos = exp + kBias;
  const int limb = pos / 32, shift = pos % 32;
  // Split before shifting so no intermediate exceeds 64 bits.
  const std::uint64_t lo = (mant & kMask32) << shift;  // < 2^64
  const std::uint64_t hi = (mant >> 32) << shift;      // < 2^53
  const auto d0 = static_cast<std::int64_t>(lo & kMask32);
  const auto d1 = static_cast<std::int64_t>((lo >> 32) + (hi & kMask32));
  const auto d2 = static_cast<std::int64_t>(hi >> 32);
  auto* l = limbs_.data() + limb;
  if ((bits >> 63) != 0) {
    l[0] -= d0;
    l[1] -= d1;
    l[2] -= d2;
  } else {
    l[0] += d0;
    l[1] += d1;
    l[2] += d2;
  }
  ++pending_;
}

void ExactSum::merge(const ExactSum& other) {
  if (pending_ + other.pending_ >= kMaxPending) normalize();
  ExactSum o = other;
  if (pending_ + o.pending_ >= kMaxPending) o.normalize();
  for (int i = 0; i < kLimbs; ++i) limbs_[i] += o.limbs_[i];
  pending_ += o.pending_ + 1;
}

void ExactSum::normalize() {
  std::int64_t carry = 0;
  for (int i = 0; i < kValueLimbs - 1; ++i) {
    const std::int64_t t = limbs_[i] + carry;
    carry = t >> 32;  // floor division (arithmetic shift), so the remainder is in [0, 2^32)
    limbs_[i] = t - carry * kDigit;
  }
  limbs_[kValueLimbs - 1] += carry;
  pending_ = 0;
}

std::span<std::int64_t, ExactSum::kLimbs> ExactSum::limbs() {
  normalize();
  // Whoever writes through the span may leave limbs up to (ranks * 2^32): force a carry pass
  // before the next addition.
  pending_ = kMaxPending;
  return limbs_;
}

double ExactSum::value() const {
  if (limbs_[kValueLimbs] != 0) return std::numeric_limits<double>::quiet_NaN();
  ExactSum a = *this;
  a.normalize();
  const bool negative = a.limbs_[kValueLimbs - 1] < 0;
  if (negative) {
    for (int i = 0; i < kValueLimbs; ++i) a.limbs_[i] = -a.limbs_[i];
    a.normalize();
  }
  // Now a non-negative integer M = sum d_i 2^(32 i), d_i in [0, 2^32) except the top one,
  // which is non-negative and may be wider. total = M * 2^-kBias.
  const auto& d = a.limbs_;
  auto bit = [&](int p) -> std::uint64_t {
    const int i = p / 32;
    if (i >= kValueLimbs) return 0;
    const int sh = p % 32;
    if (i == kValueLimbs - 1) {
      const int top = p - 32 * i;
      return top < 63 ? (static_cast<std::uint64_t>(d[i]) >> top) & 1 : 0;
    }
    return (static_cast<std::uint64_t>(d[i]) >> sh) & 1;
  };
  int top = -1;  // highest set bit position of M
  for (int i = kValueLimbs - 1; i >= 0 && top < 0; --i)
    if (d[i] != 0) top = 32 * i + (63 - std::countl_zero(static_cast<std::uint64_t>(d[i])));
  if (top < 0) return 0.0;
  // Keep 53 bits, or fewer where the result is subnormal (bit 0 of a subnormal = 2^-1074).
  const int lsb = std::max(top - 52, -1074 + kBias);
  std::uint64_t mant = 0;
  for (int p = top; p >= lsb; --p) mant = (mant << 1) | bit(p);
  if (lsb > 0) {
    const std::uint64_t round = bit(lsb - 1);
    bool sticky = false;
    const int below = lsb - 1;  // bits [0, below) are the sticky bits
    for (int i = 0; i < below / 32 && !sticky; ++i) sticky = d[i] != 0;
    for (int p = (below / 32) * 32; p < below && !sticky; ++p) sticky = bit(p) != 0;
    if (round != 0 && (sticky || (mant & 1) != 0)) ++mant;  // may carry to 2^53: still exact
  }
  const double magnitude = std::ldexp(static_cast<double>(mant), lsb - kBias);
  return negative ? -magnitude : magnitude;
}

}  // namespace miniamr::stencil
