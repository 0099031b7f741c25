#include "runtime/balance.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>
#include <vector>

#include "sfc/partition.hpp"

namespace miniamr::runtime::balance {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(h), v.end());
  const double upper = v[h];
  if (v.size() % 2 == 1) return upper;
  return 0.5 * (*std::max_element(v.begin(), v.begin() + std::ptrdiff_t(h)) + upper);
}

}  // namespace

std::vector<double> rank_speeds(std::span<const RankSummary> ranks) {
  double known = 0;
  int n = 0;
  for (const RankSummary& r : ranks)
    if (r.speed > 0) known += r.speed, ++n;
  std::vector<double> s(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r)
    s[r] = ranks[r].speed > 0 ? ranks[r].speed : n > 0 ? known / n : 1.0;
  return s;
}

namespace {

double noise_of(const RankSummary& r) {
  return r.speed > 0 ? r.noise : kUnknownNoise;
}

double speed_error_of(const RankSummary& r) {
  return r.speed > 0 ? r.speed_error : kUnknownNoise;
}

double imbalance(std::span<const double> t) {
  const double mean = std::accumulate(t.begin(), t.end(), 0.0) / double(t.size());
  return mean > 0 ? *std::ranges::max_element(t) / mean : 1.0;
}

// Blocks and messages of the migration from the cut `from` to the cut `to`: the two partitions
// of the work are walked together, each piece that changes rank counted at its old rank's mean
// block weight.
struct Traffic {
  std::int64_t blocks = 0, busiest = 0;
  int messages = 0;
};
Traffic traffic(std::span<const RankSummary> ranks, std::span<const std::int64_t> from,
                std::span<const std::int64_t> to) {
  const std::size_t P = ranks.size();
  std::vector<double> leaving(P, 0.0), arriving(P, 0.0);
  std::vector<int> partners(P, 0);
  std::size_t q = 0, r = 0;  // old and new owner of the piece starting at `at`
  std::int64_t at = 0;
  const std::int64_t total = from.back();
  std::size_t last_q = P, last_r = P;
  while (at < total && q < P && r < P) {
    if (from[q + 1] <= at) {
      ++q;
      continue;
    }
    if (to[r + 1] <= at) {
      ++r;
      continue;
    }
    const std::int64_t end = std::min(from[q + 1], to[r + 1]);
    if (q != r && ranks[q].blocks > 0) {
      const double blocks = double(end - at) * double(ranks[q].blocks) / double(ranks[q].work);
      leaving[q] += blocks;
      arriving[r] += blocks;
      if (q != last_q || r != last_r) ++partners[q], ++partners[r];
      last_q = q, last_r = r;
    }
    at = end;
  }
  Traffic t;
  for (std::size_t k = 0; k < P; ++k) {
    t.blocks += std::llround(leaving[k]);
    t.busiest =
        std::max<std::int64_t>({t.busiest, std::llround(leaving[k]), std::llround(arriving[k])});
    t.messages = std::max(t.messages, partners[k]);
  }
  return t;
}

}  // namespace

void SpeedWindow::add(double speed, double seconds) {
  if (!(speed > 0) || !std::isfinite(speed)) return;
  samples_.push_back(speed);
  seconds_.push_back(seconds > 0 && std::isfinite(seconds) ? seconds : 1.0);
  while (samples_.size() > noise_samples_) {
    samples_.pop_front();
    seconds_.pop_front();
  }
}

double SpeedWindow::speed() const {
  const std::size_t n = std::min(samples_.size(), speed_samples_);
  if (n == 0) return 0;
  // The weighted median: the sample at which half the weight is reached, the mean of two where
  // it is reached exactly between them (so equal weights give the plain median).
  std::vector<std::pair<double, double>> s(n);
  for (std::size_t i = 0; i < n; ++i)
    s[i] = {samples_[samples_.size() - n + i], seconds_[seconds_.size() - n + i]};
  std::sort(s.begin(), s.end());
  double total = 0;
  for (const auto& x : s) total += x.second;
  double below = 0;
  for (std::size_t i = 0; i < n; ++i) {
    below += s[i].second;
    if (2 * below == total && i + 1 < n) return 0.5 * (s[i].first + s[i + 1].first);
    if (2 * below >= total) return s[i].first;
  }
  return s.back().first;
}

double SpeedWindow::noise() const {
  if (samples_.size() < kMinNoiseSamples) return kUnknownNoise;
  // From the differences of successive samples: a speed that drifts as the mesh changes is not
  // noise. For independent errors of deviation s a difference deviates by s * sqrt(2).
  std::vector<double> steps(samples_.size() - 1);
  for (std::size_t i = 0; i < steps.size(); ++i)
    steps[i] = std::fabs(samples_[i + 1] - samples_[i]);
  return 1.4826 * median(std::move(steps)) / std::sqrt(2.0) /
         median({samples_.begin(), samples_.end()});
}

double SpeedWindow::speed_error() const {
  if (samples_.size() < kMinNoiseSamples) return kUnknownNoise;
  // The median of n normal samples deviates by sqrt(pi / 2) / sqrt(n) of one.
  const double n = double(std::min(samples_.size(), speed_samples_));
  return noise() * 1.2533 / std::sqrt(n);
}

double NoiseRule::margin(double noise) const {
  return factor * std::max(noise, floor);
}

std::vector<double> settled_speeds(std::span<const RankSummary> ranks,
                                   std::span<const double> previous, const NoiseRule& rule,
                                   double held_imbalance) {
  std::vector<double> s = rank_speeds(ranks);
  const double mid = median(s);
  // A speed relative to the median is as uncertain as the rank's own estimate or the typical
  // rank's, whichever is worse. With two ranks the median is their mean, from which each lies
  // by half their difference, as uncertain as half the two errors combined: judged by its own
  // error alone, a rank had to be 1.67 times as fast as the other to count while the noise was
  // unknown (a margin of 25%), where two sigmas of that half are 1.43 times.
  std::vector<double> noise(ranks.size());
  for (std::size_t r = 0; r < ranks.size(); ++r) noise[r] = speed_error_of(ranks[r]);
  const double typical = median(noise);
  const auto error = [&](std::size_t r) { return std::max(noise[r], typical); };
  // The measured outcome of the shares held: a noise estimate that takes a drift of the mesh
  // for noise must not keep shares under which the ranks are measurably apart.
  double slowest = 0, sum = 0;
  bool measured = true;
  for (const RankSummary& r : ranks) {
    measured = measured && r.seconds_per_stage > 0;
    slowest = std::max(slowest, r.seconds_per_stage);
    sum += r.seconds_per_stage;
  }
  const bool held_apart = held_imbalance > 0 && measured && !ranks.empty() &&
                          slowest * double(ranks.size()) > held_imbalance * sum;
  const bool have_previous = previous.size() == ranks.size() && !held_apart;
  for (std::size_t r = 0; r < s.size(); ++r) {
    const double rel = s[r] / mid;
    const double margin =
        rule.margin(s.size() == 2 ? std::hypot(error(0), error(1)) / 2 : error(r));
    // Hysteresis keeps a share that was changed; an equal one moves beyond the margin.
    if (have_previous && previous[r] != 1.0 &&
        std::fabs(rel - previous[r]) <= kHysteresis * margin * previous[r])
      s[r] = previous[r];
    else if (std::fabs(rel - 1.0) <= margin)
      s[r] = 1.0;
    else
      s[r] = rel;
  }
  return s;
}

std::vector<double> shares_of(std::span<const double> speeds) {
  const double sum = std::accumulate(speeds.begin(), speeds.end(), 0.0);
  std::vector<double> f(speeds.size());
  for (std::size_t r = 0; r < f.size(); ++r) f[r] = speeds[r] / sum;
  return f;
}

Proposal propose(std::span<const RankSummary> ranks, const ProposeInput& in) {
  const std::size_t P = ranks.size();
  Proposal p;
  std::vector<std::int64_t> work(P);
  for (std::size_t r = 0; r < P; ++r) work[r] = ranks[r].work;
  p.from = current_bounds(work);
  p.to = strategy_bounds(in.strategy, work, in.speeds, in.max_move);
  const std::vector<double> speeds = rank_speeds(ranks);
  p.before.resize(P);
  p.after.resize(P);
  double rebuild_s = 0;
  for (std::size_t r = 0; r < P; ++r) {
    p.before[r] = double(work[r]) / speeds[r];
    p.after[r] = double(p.to[r + 1] - p.to[r]) / speeds[r];
    p.noise = std::max(p.noise, noise_of(ranks[r]));
    rebuild_s = std::max(rebuild_s, ranks[r].rebuild_s);
  }
  if (P == 0) return p;
  p.imbalance_before = imbalance(p.before);
  p.imbalance_after = imbalance(p.after);
  const double max_before = *std::ranges::max_element(p.before);
  const double max_after = *std::ranges::max_element(p.after);
  p.relative_gain = max_before > 0 ? 1.0 - max_after / max_before : 0.0;
  p.gain_s = (max_before - max_after) * in.horizon_stages;
  const Traffic t = traffic(ranks, p.from, p.to);
  p.blocks_moved = t.blocks;
  p.busiest_blocks = t.busiest;
  p.messages = t.messages;
  if (t.busiest > 0)
    p.migration_cost_s =
        in.price.link.seconds(double(t.busiest) * in.price.block_bytes, t.messages) + rebuild_s;
  return p;
}

std::string_view reason(Verdict v) {
  switch (v) {
    case Verdict::kTake:
      return "pays";
    case Verdict::kNoMove:
      return "no move proposed";
    case Verdict::kBalanced:
      return "balanced";
    case Verdict::kWithinNoise:
      return "within noise";
    case Verdict::kReversal:
      return "reversal within hysteresis";
    case Verdict::kDoesNotPay:
      return "does not pay";
  }
  return "";
}

void Hysteresis::taken(const Proposal& p) {
  direction.resize(p.from.size(), 0);
  for (std::size_t r = 0; r < p.from.size(); ++r)
    if (p.to[r] != p.from[r]) direction[r] = p.to[r] > p.from[r] ? 1 : -1;
}

Verdict accept(const Proposal& p, const AcceptRule& rule, const Hysteresis& h) {
  if (p.imbalance_before <= rule.threshold) return Verdict::kBalanced;
  if (!p.moves()) return Verdict::kNoMove;
  const double margin = rule.noise.margin(p.noise);
  if (p.relative_gain <= margin) return Verdict::kWithinNoise;
  bool back = false;
  for (std::size_t r = 0; r < p.from.size() && r < h.direction.size(); ++r) {
    const int d = p.to[r] == p.from[r] ? 0 : p.to[r] > p.from[r] ? 1 : -1;
    back = back || (d != 0 && d == -h.direction[r]);
  }
  if (back && p.relative_gain <= kHysteresis * margin) return Verdict::kReversal;
  if (p.gain_s <= p.migration_cost_s) return Verdict::kDoesNotPay;
  return Verdict::kTake;
}

std::int64_t offset_of(std::span<const RankSummary> ranks, int rank) {
  std::int64_t offset = 0;
  for (int r = 0; r < rank; ++r) offset += ranks[std::size_t(r)].work;
  return offset;
}

}  // namespace miniamr::runtime::balance
