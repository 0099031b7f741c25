// The emulated slow rank and noise: the extra time is (factor - 1) times the work plus noise
// drawn per piece of work, reproducible, and nothing when neither is asked for; the time added is
// accounted by kind of work.
#include <gtest/gtest.h>

#include <set>

#include "runtime/slowdown.hpp"

using miniamr::runtime::Slowdown;

TEST(Slowdown, FactorScalesTheWork) {
  const Slowdown none;
  EXPECT_FALSE(none.active());
  EXPECT_EQ(none.extra(1.0, 7), 0.0);
  const Slowdown twice(2.0, 0.0, 1);
  EXPECT_TRUE(twice.active());
  EXPECT_DOUBLE_EQ(twice.extra(0.5, 7), 0.5);
  EXPECT_DOUBLE_EQ(Slowdown(3.0, 0.0, 1).extra(0.25, 9), 0.5);
}

TEST(Slowdown, AccountsTheTimeItAddsByKindOfWork) {
  using Work = Slowdown::Work;
  const Slowdown none;
  none.after(1.0, 1, Work::kAdaptation);
  EXPECT_EQ(none.spent(Work::kAdaptation), 0.0);
  const Slowdown twice(2.0, 0.0, 1);
  twice.after(1e-4, 1);  // the stages by default
  twice.after(2e-4, 2, Work::kCopies);
  twice.after(3e-4, 3, Work::kCopies);
  EXPECT_NEAR(twice.spent(Work::kStages), 1e-4, 1e-9);
  EXPECT_NEAR(twice.spent(Work::kCopies), 5e-4, 1e-9);
  EXPECT_EQ(twice.spent(Work::kAdaptation), 0.0);
}

TEST(Slowdown, NoiseIsPositiveReproducibleAndVaries) {
  const Slowdown noisy(1.0, 0.5, 42);
  EXPECT_TRUE(noisy.active());
  std::set<double> seen;
  double sum = 0;
  for (std::uint64_t id = 0; id < 1000; ++id) {
    const double x = noisy.extra(1.0, id);
    EXPECT_GE(x, 0.0);
    EXPECT_EQ(x, Slowdown(1.0, 0.5, 42).extra(1.0, id));  // the same draw for the same work
    seen.insert(x);
    sum += x;
  }
  EXPECT_GT(seen.size(), 990u);
  // |N(0, 0.5)| has mean 0.5 * sqrt(2 / pi) = 0.399.
  EXPECT_NEAR(sum / 1000, 0.399, 0.05);
  EXPECT_NE(Slowdown(1.0, 0.5, 43).extra(1.0, 3), noisy.extra(1.0, 3));  // another rank's seed
}
