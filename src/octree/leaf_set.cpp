#include "octree/leaf_set.hpp"

#include <algorithm>
#include <cassert>

namespace miniamr::octree {

LeafSet::LeafSet(std::vector<Key> keys) : keys_(std::move(keys)), codes_(keys_.size()) {
  for (std::size_t i = 0; i < keys_.size(); ++i) codes_[i] = morton_code(keys_[i]);
  assert(std::is_sorted(codes_.begin(), codes_.end()));
}

std::optional<std::size_t> LeafSet::find(const Key& k) const {
  const MortonCode c = morton_code(k);
  const auto it = std::lower_bound(codes_.begin(), codes_.end(), c);
  if (it == codes_.end() || *it != c) return std::nullopt;
  return std::size_t(it - codes_.begin());
}

std::optional<std::size_t> LeafSet::find_covering(const Key& k) const {
  // An ancestor sorts before k and nothing sorts between them but its own descendants, so the
  // covering leaf, if present, is k itself or k's immediate predecessor.
  const auto it = std::upper_bound(codes_.begin(), codes_.end(), morton_code(k));
  if (it == codes_.begin()) return std::nullopt;
  const auto i = std::size_t(it - codes_.begin()) - 1;
  if (contains(keys_[i], k)) return i;
  return std::nullopt;
}

std::pair<std::size_t, std::size_t> LeafSet::range_within(const Key& k) const {
  const auto first = std::lower_bound(codes_.begin(), codes_.end(), morton_code(k));
  const auto last = std::upper_bound(first, codes_.end(), morton_code(last_descendant(k)));
  return {std::size_t(first - codes_.begin()), std::size_t(last - codes_.begin())};
}

FaceLookup LeafSet::across(const Key& k, Face f, const RootGrid& grid) const {
  FaceLookup out;
  const auto n = face_neighbour(k, f, grid);
  if (!n) {
    out.relation = Relation::kBoundary;
    return out;
  }
  if (const auto c = find_covering(*n)) {
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
    if (const auto c = find(child(*n, o))) {
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
