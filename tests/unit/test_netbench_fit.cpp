// The alpha-beta and LogGP fits: exact data give back their parameters, noise at small sizes
// cannot make the latency negative, and data that cannot be fitted are refused.
#include <cmath>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "netbench/fit.hpp"

namespace miniamr::netbench {
namespace {

using ::testing::HasSubstr;

std::vector<Point> model_points(double alpha, double beta) {
  std::vector<Point> p;
  for (double n = 8; n <= 4194304; n *= 4) p.push_back({n, alpha + n / beta});
  return p;
}

TEST(NetbenchFit, ExactDataGiveTheirParameters) {
  const AlphaBeta ab = fit_alpha_beta(model_points(3e-7, 1.8e9));
  EXPECT_NEAR(ab.latency_s, 3e-7, 3e-7 * 1e-9);
  EXPECT_NEAR(ab.bandwidth_Bps, 1.8e9, 1.8e9 * 1e-9);
  EXPECT_EQ(ab.points, 10);
  EXPECT_LT(ab.max_rel_residual, 1e-9);
}

TEST(NetbenchFit, SmallSizesKeepTheirSay) {
  // 10% noise on every point: the relative weighting keeps the latency within the noise, where
  // unweighted least squares would be driven by the 4 MiB point's microseconds of error.
  std::vector<Point> p = model_points(2e-6, 1e10);
  for (std::size_t i = 0; i < p.size(); ++i) p[i].seconds *= i % 2 == 0 ? 1.1 : 0.9;
  const AlphaBeta ab = fit_alpha_beta(p);
  EXPECT_NEAR(ab.latency_s, 2e-6, 0.2e-6);
  EXPECT_NEAR(ab.bandwidth_Bps, 1e10, 0.15e10);
  EXPECT_NEAR(ab.max_rel_residual, 0.1, 0.05);
}

TEST(NetbenchFit, LatencyStaysAtLeastZero) {
  // Times proportional to size, the small ones a little low: the free fit's latency would be
  // negative; the constrained one is zero with the slope of the data.
  std::vector<Point> p = model_points(0, 1e9);
  p[0].seconds *= 0.5;
  const AlphaBeta ab = fit_alpha_beta(p);
  EXPECT_EQ(ab.latency_s, 0);
  EXPECT_GT(ab.bandwidth_Bps, 0);
  EXPECT_TRUE(std::isfinite(ab.bandwidth_Bps));
}

TEST(NetbenchFit, RefusesWhatCannotBeFitted) {
  const auto error = [](std::vector<Point> p) -> std::string {
    try {
      fit_alpha_beta(p);
    } catch (const FitError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_THAT(error({{8, 1e-6}, {8, 2e-6}}), HasSubstr("at least two"));
  EXPECT_THAT(error({}), HasSubstr("at least two"));
  EXPECT_THAT(error({{8, 2e-6}, {1024, 1e-6}}), HasSubstr("do not grow with the message size"));
  EXPECT_THAT(error({{8, 0}, {1024, 1e-6}}), HasSubstr("cannot be fitted"));
  EXPECT_THAT(error({{8, NAN}, {1024, 1e-6}}), HasSubstr("cannot be fitted"));
}

TEST(NetbenchFit, LogGPFromPingPongAndStream) {
  const AlphaBeta pingpong = fit_alpha_beta(model_points(2e-6, 1e10));
  // Per-message stream times: g = 5e-7 s, G = 1e-10 s/byte.
  std::vector<Point> stream;
  for (double n = 8; n <= 65536; n *= 8) stream.push_back({n, 5e-7 + n * 1e-10});
  std::string why;
  const auto m = fit_loggp(pingpong, stream, 3e-7, why);
  ASSERT_TRUE(m) << why;
  EXPECT_NEAR(m->o_s, 3e-7, 1e-15);
  EXPECT_NEAR(m->L_s, 2e-6 - 6e-7, 1e-12);
  EXPECT_NEAR(m->g_s, 5e-7 + 8e-10, 1e-15);
  EXPECT_NEAR(m->G_s_per_byte, 1e-10, 1e-13);
  // An overhead larger than half the one-way time leaves no wire latency: no model.
  EXPECT_FALSE(fit_loggp(pingpong, stream, 2e-6, why));
  EXPECT_THAT(why, HasSubstr("no wire latency"));
  EXPECT_FALSE(fit_loggp(pingpong, std::vector<Point>{{8, 1e-6}}, 1e-7, why));
  EXPECT_THAT(why, HasSubstr("two message sizes"));
}

}  // namespace
}  // namespace miniamr::netbench
