// How the mesh changes: refinement marks, their closure under the 2:1 face rule and the
// family rule (a parallel consensus), and the plan that turns marked leaves into new leaves.
#pragma once

#include <cstdint>
#include <functional>
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

// The mailbox of the consensus. The closure posts a change for every region it cannot see
// whole; the implementation delivers it to the ranks that may own leaves there (none on one
// rank), aggregated per rank, and decides termination with one reduction per round.
class MarkMailbox {
 public:
  virtual ~MarkMailbox() = default;
  // `region` may hold leaves affected by `change`: the region itself or leaves covering it.
  virtual void post(const Key& region, const MarkChange& change) = 0;
  // Sends what was posted since the last call; returns what other ranks posted to this one.
  virtual std::vector<MarkChange> exchange() = 0;
  // Global OR over ranks: true while any rank still has work.
  virtual bool any(bool local) = 0;
  // True when every leaf of `region` and every leaf covering it is on this rank, so no message
  // is needed.
  virtual bool is_local(const Key& region) const = 0;
};

// The mailbox of a single rank: everything is local.
class LocalMailbox final : public MarkMailbox {
 public:
  void post(const Key&, const MarkChange&) override {}
  std::vector<MarkChange> exchange() override { return {}; }
  bool any(bool local) override { return local; }
  bool is_local(const Key&) const override { return true; }
};

// The marks a leaf starts from (step 2 of a refinement iteration): `wanted` is what the
// callback (objects, uniform refinement) asks for; leaves at max_level cannot refine, level-0
// leaves and leaves whose family is not 8 leaves here cannot coarsen.
std::vector<std::int8_t> initial_marks(const LeafSet& leaves, int max_level,
                                       const std::function<int(const Key&)>& wanted);

struct ClosureStats {
  int rounds = 0;
  std::int64_t changes_sent = 0;
};

// Raises `marks` to the least fixed point of the rules below, over all ranks:
//   R1 a leaf marked refine makes same-level face neighbours at least stay and coarser face
//      neighbours refine;
//   R2/R3 any leaf makes coarser face neighbours at least stay (so a block never coarsens
//      next to a finer one, nor next to one that stays);
//   R4 a leaf that stays or refines makes its leaf siblings at least stay.
// Every leaf's mark is propagated once at the start, then only changes; changes for regions on
// other ranks go through the mailbox; each round ends with one global reduction.
ClosureStats close_marks(const LeafSet& leaves, std::span<std::int8_t> marks, const RootGrid& grid,
                         MarkMailbox& mailbox);

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

}  // namespace miniamr::octree
