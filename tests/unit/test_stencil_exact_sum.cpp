// ExactSum: exact accumulation and correctly rounded results, independent of order, grouping
// and of being split across "ranks" whose limbs are added as integers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "stencil/exact_sum.hpp"

namespace miniamr::stencil {
namespace {

double exact(std::initializer_list<double> xs) {
  ExactSum s;
  for (double x : xs) s.add(x);
  return s.value();
}

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// Independent reference: Shewchuk's partials with the half-even correction (the algorithm of
// Python's math.fsum), correctly rounded for finite inputs whose partial sums do not overflow.
double fsum(const std::vector<double>& xs) {
  std::vector<double> partials;
  for (double x : xs) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::fabs(x) < std::fabs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  std::size_t n = partials.size();
  double hi = 0.0, lo = 0.0;
  if (n > 0) {
    hi = partials[--n];
    while (n > 0) {
      const double x = hi, y = partials[--n];
      hi = x + y;
      lo = y - (hi - x);
      if (lo != 0.0) break;
    }
    if (n > 0 && ((lo < 0 && partials[n - 1] < 0) || (lo > 0 && partials[n - 1] > 0))) {
      const double y = lo * 2.0, x = hi + y;
      if (y == x - hi) hi = x;
    }
  }
  return hi;
}

// Values of wildly different magnitudes and both signs, with subnormals and exact cancellations.
std::vector<double> wild_values(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> mant(0.5, 1.0);
  std::uniform_int_distribution<int> expo(-1080, 1000), pick(0, 9);
  std::vector<double> xs;
  while (xs.size() < n) {
    double x = std::ldexp(mant(rng), expo(rng));  // underflows to subnormals or 0 at the bottom
    if (pick(rng) < 5) x = -x;
    if (pick(rng) == 0) x = std::ldexp(mant(rng), expo(rng) % 40);  // a cluster near 1
    xs.push_back(x);
    if (pick(rng) == 0 && xs.size() < n) xs.push_back(-x);
  }
  return xs;
}

TEST(StencilExactSum, SimpleCases) {
  EXPECT_EQ(ExactSum{}.value(), 0.0);
  EXPECT_FALSE(std::signbit(ExactSum{}.value()));
  EXPECT_EQ(exact({1e16, 1.0, -1e16}), 1.0);
  EXPECT_EQ(exact({1e100, 1.0, -1e100, 1e-100}), 1.0);
  EXPECT_EQ(exact({0.1, 0.2, -0.3}), fsum({0.1, 0.2, -0.3}));
  EXPECT_EQ(exact({-2.5}), -2.5);
  EXPECT_EQ(exact({-0.0, 0.0, -0.0}), 0.0);
  EXPECT_EQ(exact({3.0, -3.0}), 0.0);
  const double big = std::numeric_limits<double>::max();
  EXPECT_EQ(exact({big, big, -big}), big);
  EXPECT_EQ(exact({big, big}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(exact({-big, -big}), -std::numeric_limits<double>::infinity());
}

TEST(StencilExactSum, RoundsTiesToEven) {
  const double two53 = 9007199254740992.0;               // 2^53: spacing 2 above it
  EXPECT_EQ(exact({two53, 1.0}), two53);                 // tie, even is 2^53
  EXPECT_EQ(exact({two53, 3.0}), two53 + 4.0);           // tie, even is 2^53 + 4
  EXPECT_EQ(exact({two53, 1.0, 0x1p-60}), two53 + 2.0);  // above the tie
  EXPECT_EQ(exact({two53, 1.0, -0x1p-60}), two53);       // below the tie
  EXPECT_EQ(exact({-two53, -1.0}), -two53);              // symmetric for negatives
  EXPECT_EQ(exact({-two53, -3.0}), -two53 - 4.0);
  EXPECT_EQ(exact({1.0, 0x1p-53}), 1.0);                                  // 1 + half an ulp
  EXPECT_EQ(exact({1.0, 0x1p-53, 0x1p-1074}), std::nextafter(1.0, 2.0));  // sticky bit far away
  EXPECT_EQ(exact({1.0 + 0x1p-52, 0x1p-53}), 1.0 + 0x1p-51);              // odd rounds up
}

TEST(StencilExactSum, Subnormals) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const double min_normal = std::numeric_limits<double>::min();
  EXPECT_EQ(exact({tiny, tiny, tiny}), 3 * tiny);
  EXPECT_EQ(exact({tiny, -tiny}), 0.0);
  EXPECT_EQ(exact({min_normal, -tiny}), min_normal - tiny);
  EXPECT_EQ(exact({min_normal / 2, min_normal / 2}), min_normal);
  EXPECT_EQ(exact({1.0, tiny, -1.0}), tiny);
  EXPECT_EQ(exact({-1e300, -tiny, 1e300}), -tiny);
}

TEST(StencilExactSum, NonFiniteGivesNaN) {
  EXPECT_TRUE(std::isnan(exact({1.0, std::numeric_limits<double>::quiet_NaN()})));
  EXPECT_TRUE(std::isnan(exact({std::numeric_limits<double>::infinity(), 1.0})));
}

// IEEE addition of two doubles is correctly rounded, so it is the exact answer for pairs.
TEST(StencilExactSum, PairsMatchHardwareAddition) {
  const std::vector<double> xs = wild_values(20000, 1);
  std::mt19937_64 rng(2);
  std::uniform_int_distribution<std::size_t> pick(0, xs.size() - 1);
  for (int n = 0; n < 20000; ++n) {
    double a = xs[pick(rng)], b = xs[pick(rng)];
    if (n % 3 == 0) b = std::ldexp(a, -(n % 60)) * (n % 2 ? -1 : 1);  // close magnitudes
    const double want = a + b;
    ASSERT_TRUE(same_bits(exact({a, b}), want == 0 ? 0.0 : want)) << a << " + " << b;
  }
}

TEST(StencilExactSum, MatchesIndependentReference) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<double> xs = wild_values(2000, seed);
    // Cancel the large terms in some runs so the small ones decide the result.
    if (seed % 2 == 0) {
      const std::size_t n = xs.size();
      for (std::size_t i = 0; i < n; ++i)
        if (std::fabs(xs[i]) > 1e10) xs.push_back(-xs[i]);
    }
    ExactSum s;
    for (double x : xs) s.add(x);
    ASSERT_TRUE(same_bits(s.value(), fsum(xs) + 0.0)) << "seed " << seed;
  }
}

TEST(StencilExactSum, OrderIndependent) {
  std::vector<double> xs = wild_values(100000, 42);
  ExactSum first;
  for (double x : xs) first.add(x);
  const double want = first.value();
  std::mt19937_64 rng(43);
  for (int round = 0; round < 3; ++round) {
    std::shuffle(xs.begin(), xs.end(), rng);
    ExactSum s;
    for (double x : xs) s.add(x);
    ASSERT_TRUE(same_bits(s.value(), want));
  }
  std::sort(xs.begin(), xs.end());
  ExactSum sorted;
  for (double x : xs) sorted.add(x);
  EXPECT_TRUE(same_bits(sorted.value(), want));
}

TEST(StencilExactSum, MergeEqualsAddAll) {
  const std::vector<double> xs = wild_values(50000, 7);
  ExactSum all;
  for (double x : xs) all.add(x);
  std::vector<ExactSum> parts(7);
  for (std::size_t i = 0; i < xs.size(); ++i) parts[(i * 2654435761u) % 7].add(xs[i]);
  ExactSum merged;
  for (const ExactSum& p : parts) merged.merge(p);
  EXPECT_TRUE(same_bits(merged.value(), all.value()));
  // Merging in another grouping: ((p6 + p5) + ...) into p0.
  ExactSum tree = parts[6];
  for (int i = 5; i >= 0; --i) tree.merge(parts[std::size_t(i)]);
  EXPECT_TRUE(same_bits(tree.value(), all.value()));
}

// What MPI_Allreduce(SUM) on the int64 limbs does: plain element-wise integer addition.
TEST(StencilExactSum, LimbWiseIntegerAdditionIsAReduction) {
  const std::vector<double> xs = wild_values(30000, 9);
  ExactSum all;
  for (double x : xs) all.add(x);
  std::vector<ExactSum> ranks(5);
  for (std::size_t i = 0; i < xs.size(); ++i) ranks[i % 5].add(xs[i]);
  ranks[3].add(std::numeric_limits<double>::max());
  ranks[4].add(-std::numeric_limits<double>::max());
  std::vector<std::int64_t> reduced(ExactSum::kLimbs, 0);
  for (ExactSum& r : ranks) {
    const auto l = r.limbs();
    for (std::size_t i = 0; i < l.size(); ++i) {
      if (i + 2 < l.size()) {  // canonical: digits in [0, 2^32) below the top limb
        ASSERT_GE(l[i], 0);
        ASSERT_LT(l[i], std::int64_t{1} << 32);
      }
      reduced[i] += l[i];
    }
  }
  ExactSum result = ranks[0];
  const auto out = result.limbs();
  std::copy(reduced.begin(), reduced.end(), out.begin());
  EXPECT_TRUE(same_bits(result.value(), all.value()));
  result.add(1.0);  // still usable after the external write
  all.add(1.0);
  EXPECT_TRUE(same_bits(result.value(), all.value()));
  // A non-finite input on one rank reaches every rank's result.
  ExactSum bad;
  bad.add(std::numeric_limits<double>::quiet_NaN());
  const auto bl = bad.limbs();
  for (std::size_t i = 0; i < bl.size(); ++i) out[i] += bl[i];
  EXPECT_TRUE(std::isnan(result.value()));
}

TEST(StencilExactSum, ManyLargeTermsUseTheHeadroom) {
  const double big = std::numeric_limits<double>::max();
  ExactSum s;
  for (int i = 0; i < 1000; ++i) s.add(big);
  for (int i = 0; i < 999; ++i) s.add(-big);
  s.add(1.0);
  EXPECT_EQ(s.value(), big);
  ExactSum t;
  for (int i = 0; i < 1000000; ++i) t.add(0.1);
  EXPECT_EQ(t.value(), fsum(std::vector<double>(1000000, 0.1)));
}

}  // namespace
}  // namespace miniamr::stencil
