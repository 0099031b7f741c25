#include "octree/leaf_set.hpp"

#include <algorithm>
#include <cassert>

namespace miniamr::octree {

LeafSet::LeafSet(std::vector<Key> keys) : keys_(std::move(keys)), codes_(keys_.size()) {
  for (std::size_t i = 0; i < keys_.size(); ++i) codes_[i] = morton_code(keys_[i]);
  assert(std::is_sorted(codes_.begin(), codes_.end()));
}

std::size_t LeafSet::upper(MortonCode c, std::size_t near) const {
  const auto at = [&](std::size_t lo, std::size_t hi) {
    return std::size_t(std::upper_bound(codes_.begin() + std::ptrdiff_t(lo),
                                        codes_.begin() + std::ptrdiff_t(hi), c) -
                       codes_.begin());
  };
  const std::size_t n = codes_.size();
  if (near >= n) return at(0, n);
  // Galloping: steps of 1, 2, 4, ... away from `near` until the answer is bracketed, then a
  // binary search of the bracket [lo, hi] (codes_[lo - 1] <= c < codes_[hi]).
  std::size_t lo = 0, hi = 0;
  if (codes_[near] <= c) {
    lo = hi = near + 1;
    for (std::size_t step = 1; hi < n && codes_[hi] <= c; step *= 2) {
      lo = hi + 1;
      hi = lo + step;
    }
    return at(lo, std::min(hi, n));
  }
  hi = near;
  for (std::size_t step = 1;; step *= 2) {
    const std::size_t probe = hi > step ? hi - step : 0;
    if (codes_[probe] <= c) {
      lo = probe + 1;
      break;
    }
    hi = probe;
    if (probe == 0) break;
  }
  return at(lo, hi);
}

std::optional<std::size_t> LeafSet::find(const Key& k, std::size_t near) const {
  const MortonCode c = morton_code(k);
  const std::size_t i = upper(c, near);
  if (i == 0 || codes_[i - 1] != c) return std::nullopt;
  return i - 1;
}

std::optional<std::size_t> LeafSet::find_covering(const Key& k, std::size_t near) const {
  return covering(k, upper(morton_code(k), near));
}

std::optional<std::size_t> LeafSet::covering(const Key& k, std::size_t after) const {
  // An ancestor sorts before k and nothing sorts between them but its own descendants, so the
  // covering leaf, if present, is k itself or k's immediate predecessor.
  if (after == 0 || !contains(keys_[after - 1], k)) return std::nullopt;
  return after - 1;
}

std::pair<std::size_t, std::size_t> LeafSet::range_within(const Key& k, std::size_t near) const {
  // Codes are integers: the first code >= c follows the last one <= c - 1.
  const MortonCode c = morton_code(k);
  const std::size_t first = c == 0 ? 0 : upper(c - 1, near);
  return {first, upper(morton_code(last_descendant(k)), near)};
}

FaceLookup LeafSet::across(const Key& k, Face f, const RootGrid& grid, std::size_t near) const {
  FaceLookup out;
  const auto n = face_neighbour(k, f, grid);
  if (!n) {
    out.relation = Relation::kBoundary;
    return out;
  }
  // Where n sorts: its covering leaf just before, or its finer leaves just after.
  const std::size_t after = upper(morton_code(*n), near);
  if (const auto c = covering(*n, after)) {
    out.relation = keys_[*c].level == k.level ? Relation::kSame : Relation::kCoarser;
    out.index[0] = *c;
    out.count = 1;
    return out;
  }
  if (k.level >= kMaxLevel) return out;
  // Finer: the children of n that touch the shared face (2:1 balance keeps them leaves).
  const int d = axis(f);
  const int touching = is_upper(f) ? 0 : 1;  // child bit along d on the side facing k
  for (int o = 0; o < 8; ++o) {
    if (((o >> d) & 1) != touching) continue;
    if (const auto c = find(child(*n, o), after)) {
      out.index[std::size_t(out.count++)] = *c;
    }
  }
  if (out.count > 0) out.relation = Relation::kFiner;
  return out;
}

bool LeafSet::family_complete(const Key& k) const {
  if (k.level == 0) return false;
  const Key first = sibling(k, 0);
  const auto i = find(first);
  if (!i || *i + 8 > keys_.size()) return false;
  // Siblings that are all leaves sit next to each other in octant order.
  for (int o = 1; o < 8; ++o) {
    if (!(keys_[*i + std::size_t(o)] == sibling(k, o))) return false;
  }
  return true;
}

bool LeafSet::family_complete_at(std::size_t i) const {
  const Key& k = keys_[i];
  if (k.level == 0) return false;
  const auto o = std::size_t(k.octant());
  if (i < o || i - o + 8 > keys_.size()) return false;
  const Key p = parent(k);
  for (std::size_t c = 0; c < 8; ++c)
    if (c != o && !(keys_[i - o + c] == child(p, int(c)))) return false;
  return true;
}

std::vector<Key> root_leaves(const RootGrid& grid) {
  std::vector<Key> keys;
  keys.reserve(std::size_t(grid.count()));
  for (int k = 0; k < grid.n[2]; ++k)
    for (int j = 0; j < grid.n[1]; ++j)
      for (int i = 0; i < grid.n[0]; ++i) keys.push_back(root_key(i, j, k));
  std::sort(keys.begin(), keys.end(), MortonLess{});
  return keys;
}

}  // namespace miniamr::octree
