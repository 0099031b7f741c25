// Where a block lives: a weighted cut of the Morton curve into P contiguous ranges, and the
// owner of any key from the P+1 range boundaries alone.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "octree/key.hpp"

namespace miniamr::sfc {

// The ranks' ranges along the curve: rank r owns the leaves k with
// first[r] <= k < first[r+1] (Morton order). An empty rank repeats the next rank's first key.
class Partition {
 public:
  Partition() = default;
  // `firsts[r]`: the first leaf of rank r, or nothing when r holds no leaf.
  static Partition from_firsts(std::span<const std::optional<octree::Key>> firsts);

  int ranks() const { return int(first_.size()); }
  // The rank whose range contains k (the owner of the leaf k, or of the leaf covering k).
  int owner(const octree::Key& k) const;
  // The ranks that may hold leaves inside `region` or the leaf covering it: [lo, hi].
  std::pair<int, int> owners(const octree::Key& region) const;
  std::span<const octree::Key> firsts() const { return first_; }

 private:
  std::vector<octree::Key> first_;  // one per rank, non-decreasing
};

// Target rank of each of a rank's leaves for a cut of the curve into `parts` ranges of equal
// weight. `offset` is the weight of all leaves before this rank's, `total` the weight of all.
// A leaf goes to the part containing the start of its weight, so targets never decrease
// along the curve. Integer weights make the cut identical on every rank and for any P.
std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset, std::int64_t total,
                     int parts);

// Moves each target of a family that may later coarsen (the 8 children of one parent, all
// leaves here, consecutive from octant 0) to the target of its first child, so coarsening never
// needs a migration (p4est's partition for coarsening). `family_start[i]` is the index of leaf
// i's first sibling when its whole family is here, else i.
void keep_families_together(std::span<int> targets, std::span<const std::size_t> family_start);

// max - min over the per-rank loads, relative to the mean load: the reference's imbalance test.
bool needs_balance(std::span<const std::int64_t> loads_per_rank, int inbalance_percent);

}  // namespace miniamr::sfc
