// This rank's part of the distributed mesh: which range of the curve each rank owns (the
// partition), who its neighbours are, the ghost plan of its leaves and the consensus mailbox, and
// the collective operations that change them: the initial share of the roots, family gathering,
// the cut of the curve into weighted shares and migration. The leaves, blocks and costs
// themselves are a `Domain`, which the caller holds and passes in; a mapper (runtime/) reads the
// plan and runs the stages over it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "comm/mpi.hpp"
#include "mesh/domain.hpp"
#include "mesh/ghost_plan.hpp"
#include "mesh/mpi_mailbox.hpp"
#include "mesh/neighbourhood.hpp"
#include "octree/refine.hpp"
#include "sfc/curve.hpp"
#include "sfc/partition.hpp"
#include "sfc/shares.hpp"

namespace miniamr::mesh {

// The ranks this one exchanges ghosts with.
struct CommPartners {
  std::array<int, 3> axis{0, 0, 0};
  int total = 0;   // sum over axes (the reference's "total")
  int unique = 0;  // distinct ranks
};

// This rank's blocks along the ownership curve (indices into domain.leaves).
struct CurveView {
  std::vector<std::size_t> order;
};

class Mesh {
 public:
  // `ownership`: the curve whose ranges ranks own; `deepest`: the deepest level a leaf may have
  // (num_refine), which lets the partition keep its positions in 8 bytes a rank.
  Mesh(MPI_Comm parent, sfc::Curve ownership, int deepest = octree::kMaxLevel);
  // The mailbox refers to the communicator and the neighbourhood held here.
  Mesh(const Mesh&) = delete;
  Mesh& operator=(const Mesh&) = delete;

  const comm::Communicator& comm() const { return comm_; }
  sfc::Curve ownership() const { return ownership_; }
  // The plans of the current leaves. generation() changes whenever they are rebuilt, so what a
  // mapper derives from them (stage graphs, schedules) is cached against it. Made when first
  // asked for after a rebuild: a refinement step rebuilds the neighbourhood at every iteration
  // (the consensus of the next one reads it) and only the last one's plan runs stages.
  const GhostPlan& plan() const;
  std::uint64_t generation() const { return generation_; }
  // The mailbox the refinement consensus talks through.
  octree::MarkMailbox& mailbox() { return mailbox_; }

  // Collective. Rebuilds the partition, neighbourhood and plans after the leaves changed.
  void changed(const Domain& domain);
  // Collective. The same after an adaptation: since the last changed or adapted the leaves
  // changed only by splits and by merges of families whole on one rank, which move no rank's
  // first position along the curve, so the partition is kept unless blocks migrated in between
  // (one P-sized allgather fewer per adaptation). `least`: values that ride on the
  // neighbourhood's exchange to their least over the ranks (comm::sparse_exchange), such as the
  // adaptation's vote on whether a rank failed.
  void adapted(const Domain& domain, std::span<int> least = {});

  // This rank's share of the root blocks, in curve order.
  std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const;

  // Collective. Redistributes the blocks so each rank holds an equal share of the total weight
  // along the curve (families that may coarsen stay together); returns blocks sent from here.
  // With `shares` given (the same on every rank), rank r's share of the weight is proportional
  // to its value instead (sfc::Shares), and the cut falls where the shares say, within a family
  // or not.
  std::int64_t rebalance(Domain& domain, std::span<const std::int64_t> weights,
                         const sfc::Shares& shares = {});

  // Collective. The balance of `rebalance` ahead of an adaptation: the cut the balance after
  // `plan` (made from this rank's leaves and `marks`) would make of the adapted leaves, weighted
  // by `adapted_weights` (one per leaf of plan.keys), applied to the leaves they come from.
  // `marks` travel with the blocks; a family that merges and goes to another rank is merged
  // first and travels as its parent, marked to stay; a leaf to split goes to the rank of most
  // of its children (with shares the cut may fall among them). The plans are left for the
  // adaptation to rebuild, so the caller makes the plan again from the new leaves and adapts right
  // after. Returns the blocks sent from here (such a parent counts one). `shares` as for rebalance.
  // `along`: the adapted weights of the ranks before this one and of all, when the caller has
  // them (else one more collective finds them).
  std::int64_t rebalance_for_adapt(Domain& domain, const octree::AdaptPlan& plan,
                                   std::span<const std::int64_t> adapted_weights,
                                   std::vector<std::int8_t>& marks, const sfc::Shares& shares = {},
                                   std::optional<comm::Communicator::PrefixSum> along = {});
  // rebalance_for_adapt in its three phases, for a caller that accounts them apart: the cut
  // (balancing), the merging of the families that leave (the adaptation's coarsening, done
  // before they go), and the move (balancing).
  struct AdaptCut {
    std::vector<int> targets;       // per local leaf
    std::vector<bool> merges_away;  // at the first leaf of a family that merges and leaves
    // A family merged to leave whose parent's cells are still to be coarsened from its children:
    // the move does that once its headers are on their way.
    struct PendingMerge {
      std::size_t parent = 0;  // the parent's index among the local leaves
      std::array<stencil::Block, 8> children;
    };
    std::vector<PendingMerge> pending;
    // The move's time spent on the adaptation's own work, refinement and not balancing:
    // coarsening the pending parents, and gathering the partition that the move makes.
    double adapting_seconds = 0;
  };
  // Local, given `along` (else one collective finds it).
  AdaptCut cut_for_adapt(const Domain& domain, const octree::AdaptPlan& plan,
                         std::span<const std::int64_t> adapted_weights, const sfc::Shares& shares,
                         std::optional<comm::Communicator::PrefixSum> along) const;
  // Local. Merges the families that leave, so that `cut` and `marks` follow the merged leaves:
  // each such family becomes its parent, with storage of its own and its cost, and the
  // coarsening of its cells waits in cut.pending for move_for_adapt. Returns false when this rank
  // ran out of memory doing so (it then keeps its blocks as they were): pass that on to
  // move_for_adapt, which tells every rank.
  bool merge_leaving(Domain& domain, std::vector<std::int8_t>& marks, AdaptCut& cut);
  // Collective: the migration's exchange, which also says whether any rank failed to merge
  // (`merged` false: every rank then throws) and whether any block moved, and when one did the
  // new partition's (which the adaptation's rebuild then takes). Moves the blocks (with
  // their marks) to the targets of `cut`, coarsening the pending parents while the receivers
  // take storage for what this rank sends them, and gathering the new partition while the
  // blocks' storage travels (cut.adapting_seconds says how long those took).
  // Returns the blocks sent from here, or nullopt on every rank when no rank moved one (the
  // partition then stands). The plans are left for the adaptation to rebuild.
  std::optional<std::int64_t> move_for_adapt(Domain& domain, std::vector<std::int8_t>& marks,
                                             AdaptCut& cut, bool merged);

  // Collective. Moves the leading leaves of a family that starts on an earlier rank to that
  // rank, so every family that may coarsen is whole on one rank before marks are computed.
  // Returns the blocks sent from here. Local when the last rebuild found no family split
  // between ranks (Neighbourhood::families_split). The adaptation brings together only the
  // split families that coarsen (split_families); the mesh it makes is the one this gives.
  std::int64_t gather_families(Domain& domain);
  // The families of 8 leaves split between ranks, for an adaptation that gathers only those
  // that coarsen (after the closure, which keeps a split family's marks alike): per local leaf,
  // whether its family is one (`complete`, as octree::initial_marks takes it), and the rank of
  // the family's first leaf, where the family comes together (`home`; this rank for the rest).
  // Collective (point to point with the consensus neighbours), unless no family is split.
  struct SplitFamilies {
    std::vector<std::uint8_t> complete;
    std::vector<int> home;
  };
  SplitFamilies split_families(const Domain& domain) const;
  // Collective. Sends each local block i to rank targets[i] with its cost record and marks[i],
  // without rebuilding the neighbourhood: for a move between the closure and the adaptation,
  // whose rebuild follows. Returns the blocks sent from here.
  std::int64_t move_with_marks(Domain& domain, std::span<const int> targets,
                               std::vector<std::int8_t>& marks) {
    return move_blocks(domain, targets, &marks);
  }

  // Collective. Sends each local block i to rank targets[i] (with its cost record); returns
  // the blocks sent from here.
  std::int64_t migrate_blocks(Domain& domain, std::span<const int> targets);

  CurveView curve_view(const Domain& domain) const;
  // The rank whose range of the curve holds k (or the leaf covering k), as of the last
  // changed or adapted: the same answer on every rank.
  int owner(const octree::Key& k) const { return partition_.owner(k); }
  // Whether the last rebuild found a family that may coarsen split between ranks
  // (Neighbourhood::families_split): the same on every rank.
  bool families_split() const { return families_split_; }
  // The bytes a rank's entry takes in the partition's allgather (8 or 16: from_coarse_firsts).
  std::size_t partition_bytes_per_rank() const { return partition_.bytes_per_rank(); }
  CommPartners comm_partners() const;

 private:
  // Each of `leaves`' rank in the cut of the curve into equal shares of `weights` (collective),
  // families that may coarsen kept whole with their first leaf; or, when `shares` are given,
  // exactly into shares proportional to their values.
  // `along`: the weights before this rank and of all, when known.
  std::vector<int> balanced_targets(const octree::LeafSet& leaves,
                                    std::span<const std::int64_t> weights,
                                    const sfc::Shares& shares,
                                    std::optional<comm::Communicator::PrefixSum> along = {}) const;
  // Whether a target of this rank's blocks is another rank.
  bool sends_any(std::span<const int> targets) const;
  // Collective. Whether a target on any rank is not the block's holder.
  bool any_moves(std::span<const int> targets) const { return comm_.any(sends_any(targets)); }
  // Rebuilds the neighbourhood and the ghost plan over `partition` (`least` as for adapted).
  void rebuild(const Domain& domain, sfc::Partition partition, std::span<int> least = {});
  // changed() with `least` riding on the neighbourhood's exchange.
  void repartition(const Domain& domain, std::span<int> least);
  // Collective. Sends each block to its target (migrate) and notes that the partition moved.
  std::int64_t move_blocks(Domain& domain, std::span<const int> targets,
                           std::vector<std::int8_t>* marks = nullptr);
  // This rank's runs at either end of its range and its consensus neighbours' (point to point).
  struct Runs;
  Runs exchange_runs(const Domain& domain) const;

  comm::Communicator comm_;
  sfc::Curve ownership_;
  int deepest_;
  MpiMailbox mailbox_;
  sfc::Partition partition_;
  Neighbourhood neighbourhood_;            // of the last rebuild (its partition is partition_); the
                                           // mailbox reads its keys
  mutable std::optional<GhostPlan> plan_;  // of neighbourhood_, once asked for
  std::uint64_t generation_ = 0;
  bool ownership_moved_ = true;  // blocks migrated since partition_ was exchanged (or none was)
  bool families_split_ = true;   // Neighbourhood::families_split of the last rebuild
};

}  // namespace miniamr::mesh
