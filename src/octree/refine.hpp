// How the mesh changes: refinement marks, their closure under the 2:1 face rule and the
// family rule (a parallel consensus), and the plan that turns marked leaves into new leaves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "octree/key.hpp"
#include "octree/leaf_set.hpp"

namespace miniamr::octree {

// Marks only ever rise during a closure: may coarsen < stay < refine.
enum Mark : std::int8_t { kCoarsen = -1, kStay = 0, kRefine = 1 };

// "Leaf `key` now carries `mark`": the only message of the consensus.
struct MarkChange {
  Key key;
  std::int8_t mark = kCoarsen;
};

// The mailbox of the consensus. The closure posts a leaf's change for the leaves of other ranks
// across one of its faces and for its leaf siblings there; the implementation delivers the
// changes, aggregated per rank, in rounds of point-to-point messages between neighbour ranks.
class MarkMailbox {
 public:
  virtual ~MarkMailbox() = default;
  // Whether other ranks hold leaves (on one rank nothing is ever posted).
  virtual bool distributed() const = 0;
  // The change of this rank's leaf `change.key`, for other ranks' leaves across face f of it
  // that it affects (same-level ones when it refines, coarser ones always). Returns how many
  // ranks it was posted to.
  virtual int post_across(Face f, const MarkChange& change) = 0;
  // The change for other ranks' leaves of the same level in its family.
  virtual int post_family(const MarkChange& change) = 0;
  // Whether a change of this rank's leaf `leaf` (its index among the leaves being closed) can be
  // posted to another rank at all: only a leaf next to another rank's leaf, or in a family with
  // one, ever is. A leaf inside this rank's part of the mesh is not looked up at all.
  virtual bool posts_from(std::size_t /*leaf*/) const { return distributed(); }
  // One round: sends what was posted since the last round to each neighbour rank (an empty
  // message when nothing) and returns what they posted to this one. No global collective.
  virtual std::vector<MarkChange> exchange() = 0;
  // Forgets what was posted since the last round.
  virtual void discard() = 0;
};

// The mailbox of a single rank: everything is local.
class LocalMailbox final : public MarkMailbox {
 public:
  bool distributed() const override { return false; }
  int post_across(Face, const MarkChange&) override { return 0; }
  int post_family(const MarkChange&) override { return 0; }
  std::vector<MarkChange> exchange() override { return {}; }
  void discard() override {}
};

// The marks a leaf starts from (step 2 of a refinement iteration): `wanted` is what the
// callback (objects, uniform refinement) asks for; leaves at max_level cannot refine, level-0
// leaves and leaves whose family is not 8 leaves here cannot coarsen, unless
// `complete_across[i]` says leaf i's family is 8 leaves split between ranks (whose marks the
// closure then keeps alike: close_marks with split_families_may_coarsen).
std::vector<std::int8_t> initial_marks(const LeafSet& leaves, int max_level,
                                       const std::function<int(const Key&)>& wanted,
                                       std::span<const std::uint8_t> complete_across = {});

struct ClosureStats {
  int rounds = 0;
  std::int64_t changes_sent = 0;
};

// Rounds enough for the fixed point of marks on leaves of levels 0..max_level. A raise passes
// along a chain of leaves, and a round carries each chain one step further across ranks. No
// rule raises a finer leaf, and only a refine makes a refine, so a chain runs down the levels
// (one step each, R1 or R3) as refine and then as stay; one same-level step (R1) turns refine
// into stay, once, and a sibling step (R4) makes a stay, at most once per level above 0: at most
// max_level + 1 + max_level steps. A sibling step crosses ranks only to a family split between
// ranks, which cannot coarsen where initial_marks marked this rank's own leaves: then
// max_level + 1 rounds suffice (`split_families_may_coarsen` false).
constexpr int closure_rounds(int max_level, bool split_families_may_coarsen) {
  return max_level + 1 + (split_families_may_coarsen ? max_level : 0);
}

// What a face neighbour of level `across_level` must at least carry when a leaf of level
// `level` carries `mark` (R1-R3 below): a coarser neighbour refines after a refine and stays
// otherwise, a same-level one stays after a refine, a finer one is raised by nothing (nullopt).
constexpr std::optional<std::int8_t> raised_across(int level, std::int8_t mark, int across_level) {
  if (across_level < level) return mark == kRefine ? kRefine : kStay;
  if (across_level == level && mark == kRefine) return kStay;
  return std::nullopt;
}

// Raises `marks` to the least fixed point of the rules below, over all ranks:
//   R1 a leaf marked refine makes same-level face neighbours at least stay and coarser face
//      neighbours refine;
//   R2/R3 any leaf makes coarser face neighbours at least stay (so a block never coarsens
//      next to a finer one, nor next to one that stays);
//   R4 a leaf that stays or refines makes its leaf siblings at least stay.
// Every leaf's mark is propagated once at the start, then only changes; changes for leaves on
// other ranks go through the mailbox, in `rounds` rounds of neighbour messages (closure_rounds)
// and no global reduction.
ClosureStats close_marks(const LeafSet& leaves, std::span<std::int8_t> marks, const RootGrid& grid,
                         MarkMailbox& mailbox,
                         int rounds = closure_rounds(kMaxLevel,
                                                     /*split_families_may_coarsen=*/true));

// Where each leaf of the adapted mesh comes from.
struct Origin {
  enum Kind : std::uint8_t { kKept, kSplit, kMerged } kind = kKept;
  std::size_t old_index = 0;  // kKept: the leaf; kSplit: the parent; kMerged: the first child
  int octant = 0;             // kSplit: which child this is
};

struct AdaptPlan {
  std::vector<Key> keys;  // the new leaves, sorted
  std::vector<Origin> origin;
  std::int64_t splits = 0;
  std::int64_t merges = 0;
};

// Splits every leaf marked refine and merges every family whose 8 leaves are marked coarsen.
AdaptPlan plan_adapt(const LeafSet& leaves, std::span<const std::int8_t> marks);

// The leaves `key` becomes in `iterations` more refinement iterations that split every leaf
// above level `deepest` for which `wanted` says 1 (refine), and nothing else: 1 when it stays.
// The marks alone make this refinement (the closure only raises a mark), so the leaves that
// follow from `key` are at least these; the closure may add more, and merges take some away.
std::int64_t leaves_after(const Key& key, int iterations, int deepest,
                          const std::function<int(const Key&)>& wanted);

}  // namespace miniamr::octree
