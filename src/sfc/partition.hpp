// Where a block lives: a weighted cut of a space-filling curve into P contiguous ranges, and
// the owner of any key from the P+1 range boundaries alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "octree/key.hpp"
#include "sfc/curve.hpp"

namespace miniamr::sfc {

// Rank r owns the leaves whose first position p satisfies first[r] <= p < first[r+1]. An
// empty rank repeats the next rank's first position.
class Partition {
 public:
  Partition() = default;
  // Marks a rank that holds no leaf among the first positions (no leaf's position is all ones:
  // a position has 96 bits).
  static constexpr Position kNoLeaf = ~Position(0);
  // `firsts[r]`: the first position of rank r's leaves, or kNoLeaf when r holds none. The
  // vector becomes the partition's own: one P-sized array, on every rank.
  static Partition from_firsts(const CurveSpace& space, std::vector<Position> firsts);

  // The same in 8 bytes a rank: when no leaf is deeper than `deepest` and the root grid needs
  // `root_bits` bits a coordinate, a first position's low 3 (kMaxLevel - deepest) bits are 0 and
  // the rest fit in 64 bits whenever 3 (root_bits + deepest) < 64 (coarse_fits). `firsts[r]`
  // is rank r's first position shifted right by coarse_shift(deepest), or kNoCoarseLeaf. Half
  // the bytes of the P-sized array on every rank and in the allgather that makes it.
  static constexpr std::uint64_t kNoCoarseLeaf = ~std::uint64_t(0);
  static bool coarse_fits(int root_bits, int deepest) { return 3 * (root_bits + deepest) < 64; }
  static int coarse_shift(int deepest) { return 3 * (octree::kMaxLevel - deepest); }
  // A rank's first position (or kNoLeaf) as from_coarse_firsts takes it.
  static std::uint64_t coarse_first(Position first, int deepest) {
    return first == kNoLeaf ? kNoCoarseLeaf : std::uint64_t(first >> coarse_shift(deepest));
  }
  static Partition from_coarse_firsts(const CurveSpace& space, int deepest,
                                      std::vector<std::uint64_t> firsts);

  int ranks() const { return int(coarse() ? coarse_.size() : first_.size()); }
  const CurveSpace& space() const { return space_; }
  // Whether the first positions are kept in 8 bytes (from_coarse_firsts).
  bool coarse() const { return shift_ >= 0; }
  // The bytes a rank's first position takes, in the allgather and in every rank's array.
  std::size_t bytes_per_rank() const { return coarse() ? sizeof(std::uint64_t) : sizeof(Position); }
  // The rank whose range contains position p.
  int owner_at(Position p) const;
  // The owner of the leaf k, or of the leaf covering k.
  int owner(const octree::Key& k) const { return owner_at(first_position(k, space_)); }
  // Whether rank r (< ranks() - 1) holds leaves: its range of the curve is not empty.
  bool holds_leaves(int r) const {
    const auto i = std::size_t(r);
    return coarse() ? coarse_[i] < coarse_[i + 1] : first_[i] < first_[i + 1];
  }
  // The ranks that may hold leaves inside `region` or the leaf covering it: [lo, hi].
  std::pair<int, int> owners(const octree::Key& region) const {
    return {owner_at(first_position(region, space_)), owner_at(last_position(region, space_))};
  }

 private:
  CurveSpace space_;
  std::vector<Position> first_;        // one per rank, non-decreasing
  std::vector<std::uint64_t> coarse_;  // the same shifted by shift_, when shift_ >= 0
  int shift_ = -1;
};

// Target rank of each of a rank's leaves (given in curve order) for a cut of the curve into
// `parts` ranges of equal weight. `offset` is the weight of all leaves before this rank's,
// `total` the weight of all. A leaf goes to the part containing the start of its weight, so
// targets never decrease along the curve. Integer weights make the cut identical on every rank
// and for any P.
std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset, std::int64_t total,
                     int parts);

// Where part r of `parts` equal parts of a curve of `total` weight starts: ceil(r * total /
// parts), the first start that `cut` above gives to part r.
std::int64_t equal_bound(std::int64_t r, std::int64_t total, std::int64_t parts);

// The boundaries of a cut of a curve of `total` weight into parts proportional to `shares`
// (one per part): parts + 1 values from 0 to `total`, part r from bounds[r] up to bounds[r + 1].
// Equal shares give exactly the equal cut of `cut` above; the same shares give the same bounds
// on every rank.
std::vector<std::int64_t> share_bounds(std::int64_t total, std::span<const double> shares);

// As `cut`, for parts with the given boundaries (share_bounds): a leaf goes to the part
// containing the start of its weight.
std::vector<int> cut(std::span<const std::int64_t> weights, std::int64_t offset,
                     std::span<const std::int64_t> bounds);

// Moves each target of a family that may later coarsen (the 8 children of one parent, all
// leaves here, consecutive along the curve) to the target of its first leaf on the curve, so
// coarsening never needs a migration (p4est's partition for coarsening). `family_start[i]` is
// the index of the first leaf of i's family when the whole family is here, else i.
void keep_families_together(std::span<int> targets, std::span<const std::size_t> family_start);

// The per-rank loads as the imbalance test reads them.
struct LoadSpread {
  std::int64_t sum = 0, min = 0, max = 0;
  int ranks = 0;
};
LoadSpread spread_of(std::span<const std::int64_t> loads_per_rank);

// The reference's imbalance test: max - min over the per-rank loads exceeds one block and,
// relative to the mean load, `inbalance_percent`.
bool needs_balance(const LoadSpread& loads, int inbalance_percent);
bool needs_balance(std::span<const std::int64_t> loads_per_rank, int inbalance_percent);

}  // namespace miniamr::sfc
