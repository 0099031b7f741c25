// The leaves a rank holds: keys sorted along the Morton curve, found by binary search over
// their Morton codes (kept beside them).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

#include "octree/key.hpp"
#include "octree/morton_code.hpp"

namespace miniamr::octree {

// How the leaves across one face of a block relate to it.
enum class Relation { kBoundary, kSame, kCoarser, kFiner, kNotHere };

struct FaceLookup {
  Relation relation = Relation::kNotHere;
  // Indices of the local leaves across the face: one for kSame/kCoarser, up to four for kFiner
  // (those present locally, in Morton order).
  std::array<std::size_t, 4> index{};
  int count = 0;
};

class LeafSet {
 public:
  LeafSet() = default;
  // `keys` must be sorted by morton_less and hold no key twice.
  explicit LeafSet(std::vector<Key> keys);

  std::size_t size() const { return keys_.size(); }
  bool empty() const { return keys_.empty(); }
  const Key& operator[](std::size_t i) const { return keys_[i]; }
  std::span<const Key> keys() const { return keys_; }

  // Lookups take an optional index `near` where k is expected to sort (the index of the leaf
  // whose neighbour k is): the search then gallops outward from there, a few steps for the
  // neighbours that lie close on the curve, instead of a binary search over the whole set.
  static constexpr std::size_t kNowhere = ~std::size_t{0};
  std::optional<std::size_t> find(const Key& k, std::size_t near = kNowhere) const;
  // The local leaf that contains k (k itself or an ancestor), if any.
  std::optional<std::size_t> find_covering(const Key& k, std::size_t near = kNowhere) const;
  // Local leaves inside k's region (k and its descendants): [first, last).
  std::pair<std::size_t, std::size_t> range_within(const Key& k, std::size_t near = kNowhere) const;
  // The local leaves across face f of k (k need not be local).
  FaceLookup across(const Key& k, Face f, const RootGrid& grid, std::size_t near = kNowhere) const;
  // True when all 8 children of k's parent are leaves here.
  bool family_complete(const Key& k) const;
  // The same for the leaf at index i, without a search: a complete family is eight consecutive
  // leaves in octant order, so the leaf's own octant says where the family starts.
  bool family_complete_at(std::size_t i) const;

 private:
  // The first index whose code exceeds c (std::upper_bound), from `near` when given.
  std::size_t upper(MortonCode c, std::size_t near) const;
  // The leaf covering k, given `after` = upper(morton_code(k), ...).
  std::optional<std::size_t> covering(const Key& k, std::size_t after) const;

  std::vector<Key> keys_;
  std::vector<MortonCode> codes_;  // morton_code(keys_[i])
};

// The leaves of the full root grid at level 0, in Morton order.
std::vector<Key> root_leaves(const RootGrid& grid);

}  // namespace miniamr::octree
