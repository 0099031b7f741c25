// The balancer's decision on synthetic costs: measured speeds and their noise, the strategies'
// cuts, the proposal's prediction and price, and the accept rule. The scenarios at the end run a
// balancer against a synthetic machine (true rank speeds, seeded measurement noise) and fail on
// one that moves on noise: equal speeds with +-10% noise never move, a rank twice as slow moves
// once to shares 2:1 and stays, a persistent 5% imbalance with 1% noise moves once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/balance.hpp"
#include "sfc/partition.hpp"

using namespace miniamr::runtime;
using namespace miniamr::runtime::balance;

namespace {

RankSummary rank(std::int64_t work, std::int64_t blocks, double speed, double noise = 0.02) {
  RankSummary r;
  r.work = work;
  r.blocks = blocks;
  r.speed = speed;
  r.noise = noise;
  r.speed_error = noise;
  return r;
}

// A rank's summary as the balancer makes it from its speed window.
RankSummary measured(std::int64_t work, std::int64_t blocks, const SpeedWindow& w) {
  RankSummary r = rank(work, blocks, w.speed(), w.noise());
  r.speed_error = w.speed_error();
  return r;
}

Price cheap_price() {
  return {LinkModel{1e-6, 1e10}, 1e4};
}

}  // namespace

TEST(SpeedWindow, MedianSpeedAndMadNoise) {
  SpeedWindow w(3, 12);  // speed from the last 3 samples, noise from the last 12
  EXPECT_EQ(w.speed(), 0.0);
  EXPECT_EQ(w.noise(), kUnknownNoise);
  w.add(100);
  w.add(0);   // not a speed
  w.add(-3);  // nor this
  w.add(110);
  EXPECT_EQ(w.size(), 2u);
  EXPECT_DOUBLE_EQ(w.speed(), 105);
  EXPECT_EQ(w.noise(), kUnknownNoise);  // too few samples to tell
  // Ten samples: 100 110 90 100 110 90 100 110 90 100, and one disturbed interval moves
  // neither estimate much.
  for (const double x : {90.0, 100.0, 110.0, 90.0, 100.0, 110.0, 90.0, 100.0}) w.add(x);
  ASSERT_EQ(w.size(), kMinNoiseSamples);
  // Median 100; steps between samples 10 (6 times) and 20 (3 times): a median step of 10, of
  // a deviation of 10 / sqrt(2) per sample.
  const double sigma = 1.4826 * 10 / std::sqrt(2.0) / 100;
  EXPECT_NEAR(w.noise(), sigma, 1e-12);
  EXPECT_DOUBLE_EQ(w.speed(), 100);  // 110 90 100
  w.add(1000);
  EXPECT_DOUBLE_EQ(w.speed(), 100);  // 90 100 1000
  EXPECT_NEAR(w.noise(), sigma, 1e-12);
  for (int i = 0; i < 12; ++i) w.add(200);  // the window forgets what came 12 samples ago
  EXPECT_DOUBLE_EQ(w.speed(), 200);
  EXPECT_EQ(w.noise(), 0.0);
  // A steady drift is no noise: 1% a sample.
  SpeedWindow drift;
  for (int i = 0; i < 20; ++i) drift.add(100.0 + i);
  EXPECT_NEAR(drift.noise(), 1.4826 / std::sqrt(2.0) / 109.5, 1e-12);
}

TEST(SpeedWindow, SpeedIsTheMedianWeightedByTheSecondsMeasured) {
  const auto speed = [](std::initializer_list<std::pair<double, double>> samples) {
    SpeedWindow w(4, 16);
    for (const auto& [v, seconds] : samples) w.add(v, seconds);
    return w.speed();
  };
  // Two short intervals of a small mesh, then one long one: the long one is the speed.
  EXPECT_DOUBLE_EQ(speed({{100, 0.001}, {120, 0.001}, {200, 0.5}}), 200);
  // Equal weights: the plain median, the mean of the middle two of an even count.
  EXPECT_DOUBLE_EQ(speed({{100, 0.25}, {130, 0.25}, {110, 0.25}, {120, 0.25}}), 115);
  // Half the weight on each side: the mean of the two around it.
  EXPECT_DOUBLE_EQ(speed({{100, 0.5}, {300, 0.25}, {200, 0.25}}), 150);
  // A weight that is not a number of seconds counts as one.
  EXPECT_DOUBLE_EQ(speed({{100, -1}, {200, std::nan("")}, {300, 1}}), 200);
}

TEST(SpeedWindow, SpeedErrorIsThatOfAMedian) {
  SpeedWindow w(4, 16);
  w.add(100);
  EXPECT_EQ(w.speed_error(), kUnknownNoise);
  for (const double x : {90.0, 110.0, 100.0, 90.0, 110.0, 100.0, 90.0, 110.0, 100.0}) w.add(x);
  ASSERT_EQ(w.size(), kMinNoiseSamples);
  // The median of the last 4 samples: half the deviation of one.
  EXPECT_NEAR(w.speed_error(), w.noise() * 1.2533 / 2.0, 1e-12);
  EXPECT_GT(w.noise(), 0.05);
}

TEST(SettledSpeeds, EqualWithinTheNoiseProportionalBeyondIt) {
  const NoiseRule rule;  // margins of two sigmas
  // 3% apart with 5% noise: equal.
  std::vector<RankSummary> r{rank(10, 1, 103, 0.05), rank(10, 1, 100, 0.05)};
  EXPECT_EQ(settled_speeds(r, {}, rule), (std::vector<double>{1.0, 1.0}));
  // Twice as slow: its speed relative to the median.
  r = {rank(10, 1, 200), rank(10, 1, 100)};
  const auto s = settled_speeds(r, {}, rule);
  EXPECT_NEAR(s[0] / s[1], 2.0, 1e-12);
  // A wobble within the noise keeps the previous speeds (hysteresis), even one that would not
  // count as a change from equal speeds either.
  r = {rank(10, 1, 203), rank(10, 1, 99)};
  EXPECT_EQ(settled_speeds(r, s, rule), s);
  r = {rank(10, 1, 100, 0.02), rank(10, 1, 110, 0.02)};
  const auto apart = settled_speeds(r, {}, rule);
  EXPECT_NE(apart[0], apart[1]);  // 10% apart: 5% each from the median, beyond 2 sigmas
  r = {rank(10, 1, 100, 0.02), rank(10, 1, 102, 0.02)};
  EXPECT_EQ(settled_speeds(r, apart, rule), apart);  // back within 2 sigmas of equal: kept
  // Equal previous speeds hold nothing back: a rank twice as slow leaves them even while the
  // noise is unknown (a margin of 25%).
  r = {rank(10, 1, 200, kUnknownNoise), rank(10, 1, 100, kUnknownNoise)};
  const auto first = settled_speeds(r, std::vector<double>{1.0, 1.0}, rule);
  EXPECT_NEAR(first[0] / first[1], 2.0, 1e-12);
  // A rank never measured counts as the mean of the measured ones.
  r = {rank(10, 1, 100), rank(10, 1, 0), rank(10, 1, 100)};
  EXPECT_EQ(settled_speeds(r, {}, rule), (std::vector<double>{1.0, 1.0, 1.0}));
  // Held speeds are taken afresh once the ranks' measured stage times under them are more than
  // the threshold apart, although the speeds lie within the hysteresis band.
  r = {rank(10, 1, 203), rank(10, 1, 99)};
  r[0].seconds_per_stage = 1.0;
  r[1].seconds_per_stage = 1.1;
  EXPECT_EQ(settled_speeds(r, s, rule, 1.10), s);  // the slower 5% over the mean: held
  r[1].seconds_per_stage = 1.5;                    // 20% over the mean
  const auto fresh = settled_speeds(r, s, rule, 1.10);
  EXPECT_NEAR(fresh[0] / fresh[1], 203.0 / 99.0, 1e-12);
  // One noisy rank makes the other's difference uncertain too (the typical noise counts).
  r = {rank(10, 1, 140, 0.5), rank(10, 1, 100, 0.01)};
  EXPECT_EQ(settled_speeds(r, {}, rule), (std::vector<double>{1.0, 1.0}));
}

TEST(SettledSpeeds, TwoRanksAreJudgedByTheirDifference) {
  // Two ranks' median is their mean, each half their difference away from it, and that half
  // has half the two ranks' errors combined: with the noise unknown (12.5% each), two sigmas
  // of it are 17.7%, so that ranks 1.5 times apart (20% from their mean) differ, and ranks 1.3
  // times apart (13%) do not.
  const NoiseRule rule;
  std::vector<RankSummary> r{rank(10, 1, 150, kUnknownNoise), rank(10, 1, 100, kUnknownNoise)};
  const auto apart = settled_speeds(r, {}, rule);
  EXPECT_NEAR(apart[0] / apart[1], 1.5, 1e-12);
  r = {rank(10, 1, 130, kUnknownNoise), rank(10, 1, 100, kUnknownNoise)};
  EXPECT_EQ(settled_speeds(r, {}, rule), (std::vector<double>{1.0, 1.0}));
  // Three or more ranks: a rank's deviation from the median rank is judged by its own error
  // (the larger of its own and the typical one), as before: 20% off is within 25%.
  r = {rank(10, 1, 120, kUnknownNoise), rank(10, 1, 100, kUnknownNoise),
       rank(10, 1, 100, kUnknownNoise)};
  EXPECT_EQ(settled_speeds(r, {}, rule), (std::vector<double>{1.0, 1.0, 1.0}));
}

TEST(SettledSpeeds, ARankTwiceAsSlowIsSeenSoUnderHeavyNoise) {
  // Each interval's speed is off by up to 30% (a deviation of about 18%): two sigmas of one
  // sample are more than the 33% by which either of two ranks, one twice as fast, lies from
  // their median, so that judged by the spread of one sample the ranks look equal most of the
  // time. Their medians of 8 are known to about 8%. Judged afresh (no earlier speeds held), as
  // when the shares held are measured not to work.
  int judged = 0, equal = 0;
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-0.3, 0.3);
    std::vector<SpeedWindow> w(2);
    for (int i = 0; i < 60; ++i) {
      std::vector<RankSummary> r(2);
      for (std::size_t k = 0; k < 2; ++k) {
        w[k].add((k == 0 ? 2e6 : 1e6) * (1.0 + u(rng)));
        r[k] = measured(1000, 10, w[k]);
      }
      if (w[0].size() < kMinNoiseSamples) continue;
      const auto settled = settled_speeds(r, {}, NoiseRule{});
      ++judged;
      equal += settled[0] / settled[1] < 1.4;
    }
  }
  // Two sigmas of the speeds' medians leave a few judgements in a hundred to chance; those of
  // one sample leave most of them (171 of 255).
  EXPECT_LE(equal, judged / 20) << equal << " of " << judged << " judged the ranks equal";
}

TEST(Strategies, CutsInWorkSpace) {
  const std::vector<std::int64_t> work{600, 300, 300};
  const std::vector<double> equal{1, 1, 1};
  EXPECT_EQ(current_bounds(work), (std::vector<std::int64_t>{0, 600, 900, 1200}));
  EXPECT_EQ(strategy_bounds(Strategy::kNone, work, equal, 1),
            (std::vector<std::int64_t>{0, 600, 900, 1200}));
  EXPECT_EQ(strategy_bounds(Strategy::kSfc, work, equal, 1),
            (std::vector<std::int64_t>{0, 400, 800, 1200}));
  EXPECT_EQ(strategy_bounds(Strategy::kPredictive, work, std::vector<double>{2, 1, 1}, 1),
            (std::vector<std::int64_t>{0, 600, 900, 1200}));
  // Diffusion: each pair equalises as if the rest stood still: 0|1 at 450, 1|2 at 900.
  EXPECT_EQ(strategy_bounds(Strategy::kDiffusion, work, equal, 1),
            (std::vector<std::int64_t>{0, 450, 900, 1200}));
  // Central moves at most a quarter of the work: the sfc cut moves 300, allowed 300.
  EXPECT_EQ(strategy_bounds(Strategy::kCentral, work, equal, 0.25),
            (std::vector<std::int64_t>{0, 400, 800, 1200}));
  // The sfc cut moves 300 (200 from rank 0, 100 from rank 1); allowed 150: half way.
  EXPECT_EQ(moved_work(current_bounds(work), strategy_bounds(Strategy::kSfc, work, equal, 1)), 300);
  const auto c = strategy_bounds(Strategy::kCentral, work, equal, 150.0 / 1200.0);
  EXPECT_EQ(c, (std::vector<std::int64_t>{0, 500, 850, 1200}));
  EXPECT_LE(moved_work(current_bounds(work), c), 150);
  EXPECT_EQ(moved_work(current_bounds(work), current_bounds(work)), 0);
}

TEST(Strategies, BoundsStayInOrderForExtremeSpeeds) {
  // A very slow middle rank: both neighbours' pairs pull its boundaries across each other.
  const std::vector<std::int64_t> work{100, 100, 100};
  const auto b = strategy_bounds(Strategy::kDiffusion, work, std::vector<double>{1, 1e-3, 1}, 1);
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  EXPECT_EQ(b.front(), 0);
  EXPECT_EQ(b.back(), 300);
  EXPECT_EQ(strategy_named("sfc"), Strategy::kSfc);
  EXPECT_EQ(strategy_named("greedy"), std::nullopt);
}

TEST(Propose, PredictsTimesTrafficAndPrice) {
  // 20 blocks of 100 on rank 0 at speed 100, 10 on rank 1 at speed 100: the sfc cut moves 5.
  const std::vector<RankSummary> r{rank(2000, 20, 100), rank(1000, 10, 100)};
  const std::vector<double> equal{1, 1};
  const LinkModel link{0.5, 1000};  // 0.5 s a message, 1 kB/s
  const Proposal p = propose(r, {Strategy::kSfc, 1, equal, 10, {link, 100}});
  EXPECT_EQ(p.to, (std::vector<std::int64_t>{0, 1500, 3000}));
  EXPECT_EQ(p.before, (std::vector<double>{20, 10}));
  EXPECT_EQ(p.after, (std::vector<double>{15, 15}));
  EXPECT_NEAR(p.imbalance_before, 20.0 / 15.0, 1e-12);
  EXPECT_NEAR(p.imbalance_after, 1.0, 1e-12);
  EXPECT_NEAR(p.relative_gain, 0.25, 1e-12);
  EXPECT_NEAR(p.gain_s, 5 * 10, 1e-12);
  EXPECT_EQ(p.blocks_moved, 5);
  EXPECT_EQ(p.busiest_blocks, 5);
  EXPECT_EQ(p.messages, 1);
  EXPECT_NEAR(p.migration_cost_s, 0.5 + 5 * 100 / 1000.0, 1e-12);
  // The measured rebuild of the last migration is priced in (the largest of any rank).
  std::vector<RankSummary> rebuilt = r;
  rebuilt[1].rebuild_s = 2;
  EXPECT_NEAR(propose(rebuilt, {Strategy::kSfc, 1, equal, 10, {link, 100}}).migration_cost_s, 3.0,
              1e-12);
  // Nothing to move: no cost.
  const Proposal none = propose(r, {Strategy::kNone, 1, equal, 10, {link, 100}});
  EXPECT_FALSE(none.moves());
  EXPECT_EQ(none.migration_cost_s, 0);
}

TEST(Propose, TrafficCountsEachPartnerOnce) {
  // Rank 1 of three gives its work to both neighbours.
  const std::vector<RankSummary> r{rank(100, 1, 100), rank(400, 4, 100), rank(100, 1, 100)};
  const Proposal p =
      propose(r, {Strategy::kSfc, 1, std::vector<double>{1, 1, 1}, 1, cheap_price()});
  EXPECT_EQ(p.to, (std::vector<std::int64_t>{0, 200, 400, 600}));
  EXPECT_EQ(p.blocks_moved, 2);
  EXPECT_EQ(p.busiest_blocks, 2);
  EXPECT_EQ(p.messages, 2);
}

TEST(Accept, EachReason) {
  const AcceptRule rule{1.0, {}};
  const std::vector<double> equal{1, 1};
  const std::vector<RankSummary> r{rank(2000, 20, 100), rank(1000, 10, 100)};
  const ProposeInput in{Strategy::kSfc, 1, equal, 10, cheap_price()};
  const Proposal p = propose(r, in);
  EXPECT_EQ(accept(p, rule, {}), Verdict::kTake);
  EXPECT_EQ(accept(p, AcceptRule{1.5, {}}, {}), Verdict::kBalanced);
  EXPECT_EQ(accept(propose(r, {Strategy::kNone, 1, equal, 10, cheap_price()}), rule, {}),
            Verdict::kNoMove);
  // Noisier measurements than the 25% gain.
  const std::vector<RankSummary> noisy{rank(2000, 20, 100, 0.15), rank(1000, 10, 100, 0.15)};
  EXPECT_EQ(accept(propose(noisy, in), rule, {}), Verdict::kWithinNoise);
  // A link too slow for a gain of 50 s.
  const ProposeInput slow{Strategy::kSfc, 1, equal, 10, {LinkModel{100, 1}, 1e4}};
  EXPECT_EQ(accept(propose(r, slow), rule, {}), Verdict::kDoesNotPay);
  EXPECT_EQ(reason(Verdict::kDoesNotPay), "does not pay");
}

TEST(Accept, MovingBackNeedsAWiderMargin) {
  const AcceptRule rule{1.0, {}};
  const std::vector<double> equal{1, 1};
  // An 11% gain with 5% noise (a margin of 10%): enough to move a boundary on, not enough to
  // move it back (15%).
  const std::vector<RankSummary> r{rank(1100, 11, 100, 0.05), rank(860, 9, 100, 0.05)};
  const Proposal p = propose(r, {Strategy::kSfc, 1, equal, 100, cheap_price()});
  ASSERT_LT(p.to[1], p.from[1]);  // the boundary moves back along the curve: rank 0 gives
  ASSERT_GT(p.relative_gain, 0.1);
  ASSERT_LT(p.relative_gain, 0.2);
  EXPECT_EQ(accept(p, rule, {}), Verdict::kTake);
  Hysteresis on;  // the last move across boundary 1 went the same way
  on.direction = {0, -1, 0};
  EXPECT_EQ(accept(p, rule, on), Verdict::kTake);
  Hysteresis back;  // the last move went the other way
  back.direction = {0, 1, 0};
  EXPECT_EQ(accept(p, rule, back), Verdict::kReversal);
  Hysteresis h;
  h.taken(p);
  EXPECT_EQ(h.direction, (std::vector<int>{0, -1, 0}));
}

TEST(Owners, LocalTargetsFromTheBoundsAreTheCurveCut) {
  // The rank's 8 blocks start at 400 in work space; the bounds put 500 and 650 in ranks 1 and
  // 2's ranges. Each block goes to the range holding the start of its weight, whatever families
  // the cut goes through.
  const std::vector<std::int64_t> w(8, 50);
  const std::vector<std::int64_t> bounds{0, 500, 650, 1000};
  EXPECT_EQ(miniamr::sfc::cut(w, 400, bounds), (std::vector<int>{0, 0, 1, 1, 1, 2, 2, 2}));
  const std::vector<RankSummary> r{rank(100, 1, 1), rank(300, 3, 1), rank(50, 1, 1)};
  EXPECT_EQ(offset_of(r, 0), 0);
  EXPECT_EQ(offset_of(r, 2), 400);
}

namespace {

// A synthetic machine of ranks with true speeds, blocks of equal work along the curve, and a
// balancer that measures each rank's speed once per interval with a seeded uniform relative
// error of at most `noise`. Returns the intervals at which blocks moved, and the final shares.
struct Outcome {
  std::vector<int> moved_at;
  std::vector<double> shares;        // each rank's fraction of the blocks at the end
  std::vector<double> shares_after;  // rank 0's fraction after each move
};

struct Balancer {
  AcceptRule rule{1.0, {}};
  std::size_t window = 8;  // speed samples (noise: 32)
};

Outcome run_machine(const std::vector<double>& true_speeds, double noise, int intervals,
                    const Balancer& b, std::uint64_t seed) {
  const std::size_t P = true_speeds.size();
  constexpr std::int64_t kBlocks = 600, kWeight = 1000;
  std::vector<std::int64_t> blocks(P, kBlocks / std::int64_t(P));
  std::vector<SpeedWindow> windows(P, SpeedWindow(b.window, 32));
  std::vector<double> settled;
  Hysteresis h;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Outcome out;
  for (int i = 0; i < intervals; ++i) {
    std::vector<RankSummary> ranks(P);
    for (std::size_t r = 0; r < P; ++r) {
      windows[r].add(true_speeds[r] * (1.0 + noise * u(rng)));
      ranks[r] = measured(blocks[r] * kWeight, blocks[r], windows[r]);
    }
    const auto speeds = settled_speeds(ranks, settled, b.rule.noise);
    const Proposal p = propose(ranks, {Strategy::kSfc, 1, speeds, 100, cheap_price()});
    if (accept(p, b.rule, h) != Verdict::kTake) continue;
    settled = speeds;
    h.taken(p);
    // Every block's new owner: the whole curve seen from one place.
    const std::vector<std::int64_t> w(kBlocks, kWeight);
    const auto t = miniamr::sfc::cut(w, 0, p.to);
    std::vector<std::int64_t> now(P, 0);
    for (const int owner : t) ++now[std::size_t(owner)];
    if (now != blocks) {
      out.moved_at.push_back(i);
      out.shares_after.push_back(double(now[0]) / kBlocks);
    }
    blocks = now;
  }
  for (std::size_t r = 0; r < P; ++r) out.shares.push_back(double(blocks[r]) / kBlocks);
  return out;
}

}  // namespace

TEST(Scenario, EqualSpeedsWithTenPercentNoiseNeverMove) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    for (const std::size_t P : {2u, 3u, 8u}) {
      const Outcome o = run_machine(std::vector<double>(P, 1e6), 0.10, 200, {}, seed);
      EXPECT_TRUE(o.moved_at.empty())
          << P << " ranks, seed " << seed << ": moved at " << o.moved_at.front();
    }
  }
  // The same machine tempts a balancer that believes each measurement: it moves.
  const Balancer credulous{{1.0, {0.0, 0.0}}, 1};
  EXPECT_GT(run_machine(std::vector<double>(2, 1e6), 0.10, 200, credulous, 1).moved_at.size(), 10u);
}

TEST(Scenario, ARankTwiceAsSlowMovesToTwoToOneAndStays) {
  // The first measurement already shows it; once the noise is known (kMinNoiseSamples) the
  // estimate may be refined once, in the same direction; then nothing moves.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Outcome o = run_machine({2e6, 1e6}, 0.02, 200, {}, seed);
    ASSERT_GE(o.moved_at.size(), 1u) << "seed " << seed;
    EXPECT_LE(o.moved_at.size(), 2u) << "seed " << seed;
    EXPECT_EQ(o.moved_at.front(), 0);
    EXPECT_LE(o.moved_at.back(), int(kMinNoiseSamples)) << "seed " << seed;
    EXPECT_TRUE(std::is_sorted(o.shares_after.begin(), o.shares_after.end())) << "back and forth";
    EXPECT_NEAR(o.shares[0], 2.0 / 3.0, 0.01) << "seed " << seed;
  }
  // Four ranks, the third slow: the others share its loss equally.
  const Outcome four = run_machine({2e6, 2e6, 1e6, 2e6}, 0.02, 200, {}, 3);
  EXPECT_LE(four.moved_at.size(), 2u);
  EXPECT_LE(four.moved_at.back(), int(kMinNoiseSamples));
  EXPECT_NEAR(four.shares[2], 1.0 / 7.0, 0.01);
  EXPECT_NEAR(four.shares[0], 2.0 / 7.0, 0.01);
}

TEST(Scenario, APersistentFivePercentImbalanceWithOnePercentNoiseMovesOnce) {
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const Outcome o = run_machine({1.05e6, 1e6}, 0.01, 200, {}, seed);
    EXPECT_EQ(o.moved_at.size(), 1u) << "seed " << seed;
    EXPECT_NEAR(o.shares[0], 1.05 / 2.05, 0.01) << "seed " << seed;
  }
  // A balancer without hysteresis that follows each median chases the wobble of the estimate.
  const Balancer jumpy{{1.0, {0.0, 0.0}}, 8};
  EXPECT_GT(run_machine({1.05e6, 1e6}, 0.01, 200, jumpy, 1).moved_at.size(), 1u);
}
