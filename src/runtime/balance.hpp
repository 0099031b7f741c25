// The dynamic runtime's balancing decision as pure functions (no MPI). Each rank contributes one
// summary (its work along the curve in model units, its block count, its measured speed and the
// noise of that measurement), gathered in one collective; from the P summaries every rank works
// out the same proposal (a cut of the curve with its predicted rank times, migration cost and
// gain: propose) and the same verdict (accept), and then maps its own blocks to their new owners
// (owners). As AMReX's makeSFC and makeKnapSack return the efficiency of a distribution and
// leave the choice to the caller, propose only predicts; accept takes a move only when it gains
// more than the measured noise of the rank times and more than the migration costs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/balance_strategies.hpp"
#include "runtime/link_model.hpp"

namespace miniamr::runtime::balance {

// One rank's numbers, the same layout on every rank (gathered as bytes).
struct RankSummary {
  std::int64_t work = 0;         // model units per stage of its blocks
  std::int64_t blocks = 0;       // blocks it holds
  double speed = 0;              // model units per second of compute (0: never measured)
  double noise = 0;              // relative spread of its measured speeds (0: unknown)
  double speed_error = 0;        // relative standard error of `speed` (a median of samples)
  double seconds_per_stage = 0;  // measured over its last interval
  double rebuild_s = 0;          // measured: its last migration's time beyond moving the bytes
};

// A noise estimate needs this many samples: the median absolute deviation of fewer is too
// often small by chance. Until then a rank's noise is taken to be kUnknownNoise, whose margin
// (25%) is above the spread of a busy machine and below a rank twice as slow.
inline constexpr std::size_t kMinNoiseSamples = 10;
inline constexpr double kUnknownNoise = 0.125;

// A rank's speeds over its last intervals. Its speed is the median of the last `speed_samples`,
// each weighted by the seconds it was measured over (an interval of a mesh a hundredth the size
// says a hundredth as much: the first cut of a run is made on small meshes, whose intervals a
// single interruption can move by a third),
// its noise the median absolute difference of successive samples among the last
// `noise_samples` (as a normal sigma) over their median: an interval disturbed by something
// else on the machine moves neither, a speed that drifts as the mesh changes is not taken for
// noise, and the noise, a property of the machine, is estimated from a longer window.
class SpeedWindow {
 public:
  explicit SpeedWindow(std::size_t speed_samples = 8, std::size_t noise_samples = 32)
      : speed_samples_(speed_samples), noise_samples_(std::max(speed_samples, noise_samples)) {}
  // Ignored unless speed > 0 and finite; `seconds` (the interval measured) weighs it in speed(),
  // and must be > 0 (else it weighs 1).
  void add(double speed, double seconds = 1.0);
  std::size_t size() const { return samples_.size(); }
  double speed() const;  // 0 while empty
  double noise() const;  // kUnknownNoise with fewer than kMinNoiseSamples samples
  // The relative standard error of speed(), the median of n samples of deviation noise():
  // noise() * 1.2533 / sqrt(n). A difference of speeds is judged by this, not by the spread of
  // one sample: a rank twice as slow stays twice as slow under a noise of 20% a sample.
  // kUnknownNoise while noise() is unknown.
  double speed_error() const;

 private:
  std::size_t speed_samples_, noise_samples_;
  std::deque<double> samples_;
  std::deque<double> seconds_;  // each sample's weight
};

// How far a measurement must go before it counts: a difference within `margin` of the noise is
// taken for noise, and one that would undo a change needs kHysteresis times that.
inline constexpr double kHysteresis = 1.5;
struct NoiseRule {
  double factor = 2.0;  // margins are this many noise sigmas...
  double floor = 0.01;  // ...of at least this relative noise (a timer is not exact either)
  double margin(double noise) const;
};

// Every rank's measured speed, a rank never measured taking the mean of the measured ones (1
// when none is).
std::vector<double> rank_speeds(std::span<const RankSummary> ranks);

// The relative speeds a cut is made with (median rank 1): each rank's measured speed over the
// median, kept at a `previous` value other than 1 where it lies within kHysteresis noise
// margins of it (hysteresis: a cut does not follow the wobble of a measurement), else at 1 where it
// lies within the margin of the median (equal shares when speeds agree within the noise). A rank's
// margin is that of the standard error of its speed or of the median rank's, whichever is larger;
// with two ranks, whose median is their mean, half those of the two combined.
// Ranks never measured count as the mean of the measured ones. `previous` is empty or one per rank.
// Hysteresis holds only while the shares it keeps are seen to work: when the ranks' measured
// seconds per stage under them are more than `held_imbalance` apart (max over mean; 0: never), the
// speeds are taken afresh.
std::vector<double> settled_speeds(std::span<const RankSummary> ranks,
                                   std::span<const double> previous, const NoiseRule& rule,
                                   double held_imbalance = 0);

// `speeds` as fractions of their sum: the shares of the work a cut gives each rank.
std::vector<double> shares_of(std::span<const double> speeds);

// What moving blocks costs.
struct Price {
  LinkModel link;          // bytes and messages between two ranks
  double block_bytes = 0;  // one block's data
};

struct ProposeInput {
  Strategy strategy = Strategy::kSfc;
  double max_move = 1.0;           // central
  std::span<const double> speeds;  // the cut's relative speeds (settled_speeds)
  double horizon_stages = 1;       // stages the new cut would run before the next re-cut
  Price price;
};

struct Proposal {
  std::vector<std::int64_t> from, to;  // the current and the proposed boundaries (P + 1)
  std::vector<double> before, after;   // predicted seconds per stage of each rank
  double imbalance_before = 1, imbalance_after = 1;  // max over mean of before and after
  double relative_gain = 0;                          // 1 - max(after) / max(before)
  std::int64_t blocks_moved = 0;                     // estimated, all ranks
  std::int64_t busiest_blocks = 0;                   // the most blocks one rank sends or receives
  int messages = 0;             // the most ranks one rank sends to or receives from
  double migration_cost_s = 0;  // the busiest rank's migration, plus the plans' rebuild
  double gain_s = 0;            // (max(before) - max(after)) over the horizon
  double noise = 0;             // the largest noise of a rank
  bool moves() const { return blocks_moved > 0; }
};

// Predicted rank times use each rank's measured speed; the cut uses `in.speeds`.
Proposal propose(std::span<const RankSummary> ranks, const ProposeInput& in);

enum class Verdict {
  kTake,         // pays beyond the noise
  kNoMove,       // the proposal moves no block
  kBalanced,     // imbalance at most the threshold
  kWithinNoise,  // the gain is within the noise of the measurement
  kReversal,     // it would move a boundary back across which blocks just moved, for less than
                 // kHysteresis noise margins
  kDoesNotPay,   // the gain over the horizon is less than the migration cost
};
std::string_view reason(Verdict v);

struct AcceptRule {
  double threshold =
      1.0;  // --lb_threshold: imbalance (max over mean) at or below which nothing moves
  NoiseRule noise;
};

// Per boundary, the direction (-1, 0, 1) in which blocks last moved across it.
struct Hysteresis {
  std::vector<int> direction;
  void taken(const Proposal& p);
};

Verdict accept(const Proposal& p, const AcceptRule& rule, const Hysteresis& h);

// This rank's share of the work before its own: the sum of the works of the ranks before `rank`.
std::int64_t offset_of(std::span<const RankSummary> ranks, int rank);

}  // namespace miniamr::runtime::balance
