#include "runtime/balance_strategies.hpp"

#include <algorithm>
#include <cmath>

#include "sfc/partition.hpp"

namespace miniamr::runtime::balance {

namespace {

// Neighbours on the curve move their common boundary so that their two times agree, as if the
// rest of the curve stood still; each boundary depends on its two ranks only, so a hot spot
// spreads over several decisions (the accept rule judges each).
std::vector<std::int64_t> diffusion(std::span<const std::int64_t> work,
                                    std::span<const double> speeds) {
  const std::vector<std::int64_t> from = current_bounds(work);
  std::vector<std::int64_t> to = from;
  for (std::size_t r = 1; r < work.size(); ++r) {
    const double pair = double(work[r - 1] + work[r]);
    const double left = speeds[r - 1] / (speeds[r - 1] + speeds[r]);
    to[r] = from[r - 1] + std::llround(pair * left);
  }
  return to;
}

// The sfc cut, each boundary moved the same fraction of the way there, so that at most
// `max_move` of the work changes rank.
std::vector<std::int64_t> central(std::span<const std::int64_t> work,
                                  std::span<const double> speeds, double max_move) {
  const std::vector<std::int64_t> from = current_bounds(work);
  std::vector<std::int64_t> to = sfc::share_bounds(from.back(), speeds);
  const std::int64_t moved = moved_work(from, to);
  const double allowed = max_move * double(from.back());
  if (double(moved) <= allowed) return to;
  const double k = allowed / double(moved);
  for (std::size_t r = 1; r + 1 < to.size(); ++r)
    to[r] = from[r] + std::llround(k * double(to[r] - from[r]));
  return to;
}

}  // namespace

std::optional<Strategy> strategy_named(std::string_view name) {
  if (name == "none") return Strategy::kNone;
  if (name == "sfc") return Strategy::kSfc;
  if (name == "diffusion") return Strategy::kDiffusion;
  if (name == "central") return Strategy::kCentral;
  if (name == "predictive") return Strategy::kPredictive;
  return std::nullopt;
}

std::vector<std::int64_t> current_bounds(std::span<const std::int64_t> work) {
  std::vector<std::int64_t> b(work.size() + 1, 0);
  for (std::size_t r = 0; r < work.size(); ++r) b[r + 1] = b[r] + work[r];
  return b;
}

std::int64_t moved_work(std::span<const std::int64_t> from, std::span<const std::int64_t> to) {
  std::int64_t moved = 0;
  for (std::size_t r = 0; r + 1 < from.size(); ++r) {
    const std::int64_t kept =
        std::max<std::int64_t>(0, std::min(from[r + 1], to[r + 1]) - std::max(from[r], to[r]));
    moved += from[r + 1] - from[r] - kept;
  }
  return moved;
}

std::vector<std::int64_t> strategy_bounds(Strategy strategy, std::span<const std::int64_t> work,
                                          std::span<const double> speeds, double max_move) {
  std::vector<std::int64_t> b;
  switch (strategy) {
    case Strategy::kNone:
      return current_bounds(work);
    case Strategy::kSfc:
    case Strategy::kPredictive:
      b = sfc::share_bounds(current_bounds(work).back(), speeds);
      break;
    case Strategy::kDiffusion:
      b = diffusion(work, speeds);
      break;
    case Strategy::kCentral:
      b = central(work, speeds, max_move);
      break;
  }
  // Ranges in rank order: never a boundary before the one on its left, nor past the end.
  for (std::size_t r = 1; r < b.size(); ++r) b[r] = std::clamp(b[r], b[r - 1], b.back());
  return b;
}

}  // namespace miniamr::runtime::balance
