#include "sfc/partition.hpp"

#include <algorithm>
#include <cassert>

#include "sfc/shares.hpp"

namespace miniamr::sfc {

namespace {

__extension__ typedef __int128 i128;

// Walk backwards so an empty rank takes the first position of the next non-empty one; trailing
// empty ranks take a position past the end of the curve (the no-leaf mark itself).
template <class P>
void fill_empty(std::vector<P>& first, P no_leaf) {
  P next = no_leaf;
  for (std::size_t r = first.size(); r-- > 0;) {
    if (first[r] != no_leaf) next = first[r];
    first[r] = next;
  }
  if (!first.empty()) first[0] = 0;  // rank 0 starts the curve
}

}  // namespace

Partition Partition::from_firsts(const CurveSpace& space, std::vector<Position> firsts) {
  Partition p;
  p.space_ = space;
  p.first_ = std::move(firsts);
  fill_empty(p.first_, kNoLeaf);
  return p;
}

Partition Partition::from_coarse_firsts(const CurveSpace& space, int deepest,
                                        std::vector<std::uint64_t> firsts) {
  Partition p;
  p.space_ = space;
  p.coarse_ = std::move(firsts);
  p.shift_ = coarse_shift(deepest);
  fill_empty(p.coarse_, kNoCoarseLeaf);
  return p;
}

int Partition::owner_at(Position pos) const {
  // The last rank whose first position is <= pos; among ranks sharing one (empty ones), the
  // last is the one that holds leaves. A first position's shifted-out bits are 0, so it is
  // <= pos exactly when it is <= pos shifted alike.
  const auto last_at_most = [](const auto& first, auto p) {
    const auto it = std::upper_bound(first.begin(), first.end(), p);
    return std::max(0, int(it - first.begin()) - 1);
  };
  return coarse() ? last_at_most(coarse_, std::uint64_t(pos >> shift_)) : last_at_most(first_, pos);
}

std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset, std::int64_t total,
                     int parts) {
  std::vector<int> target(weights.size(), 0);
  if (total <= 0) return target;
  std::int64_t before = offset;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    // floor(before * parts / total), without overflow for any realistic mesh.
    const auto t = static_cast<std::int64_t>((static_cast<i128>(before) * parts) / total);
    target[i] = int(std::min<std::int64_t>(t, parts - 1));
    before += weights[i];
  }
  return target;
}

std::int64_t equal_bound(std::int64_t r, std::int64_t total, std::int64_t parts) {
  return std::int64_t((i128(r) * total + i128(parts) - 1) / i128(parts));
}

std::vector<std::int64_t> share_bounds(std::int64_t total, std::span<const double> shares) {
  // Each bound as sfc::Shares places it, so that the dense and the sparse form of the same
  // shares (the balancer's strategies, the refinement cut) cut a curve alike.
  const Shares sparse(shares);
  std::vector<std::int64_t> bounds(shares.size() + 1, 0);
  for (std::size_t r = 1; r < bounds.size(); ++r)
    bounds[r] = std::clamp(sparse.bound(int(r), total), bounds[r - 1], total);
  return bounds;
}

std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset,
                     std::span<const std::int64_t> bounds) {
  std::vector<int> target(weights.size(), 0);
  if (bounds.size() < 2 || bounds.back() <= 0) return target;
  // Part r (r >= 1) starts at bounds[r]; the last part takes everything after its start.
  const auto first = bounds.begin() + 1, last = bounds.end() - 1;
  std::int64_t before = offset;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    target[i] = int(std::upper_bound(first, last, before) - first);
    before += weights[i];
  }
  return target;
}

void keep_families_together(std::span<int> targets, std::span<const std::size_t> family_start) {
  assert(targets.size() == family_start.size());
  for (std::size_t i = 0; i < targets.size(); ++i) targets[i] = targets[family_start[i]];
}

LoadSpread spread_of(std::span<const std::int64_t> loads) {
  if (loads.empty()) return {};
  const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
  std::int64_t sum = 0;
  for (auto l : loads) sum += l;
  return {sum, *lo, *hi, int(loads.size())};
}

bool needs_balance(const LoadSpread& l, int inbalance_percent) {
  if (l.ranks == 0 || l.sum == 0 || l.max <= l.min + 1) return false;
  return double(l.max - l.min) * double(l.ranks) / double(l.sum) > inbalance_percent / 100.0;
}

bool needs_balance(std::span<const std::int64_t> loads, int inbalance_percent) {
  return needs_balance(spread_of(loads), inbalance_percent);
}

}  // namespace miniamr::sfc
