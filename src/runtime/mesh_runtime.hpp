// What both mappers share: ownership of curve ranges (initial share, family gathering,
// rebalancing and migration), the ghost plan and stage graph of the current mesh, the
// consensus mailbox and the stage kernels. A mapper adds only how a stage graph runs.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "mesh/ghost_plan.hpp"
#include "mesh/mpi_mailbox.hpp"
#include "runtime/runtime.hpp"
#include "runtime/slowdown.hpp"
#include "runtime/stage_graph.hpp"
#include "sfc/curve.hpp"
#include "sfc/partition.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::runtime {

// OpenMP threads of this rank (1 without OpenMP) and the calling thread's index.
int thread_count();
int thread_index();

struct RuntimeOptions {
  bool blocking_send = false;  // MPI_Send instead of MPI_Isend (static; receives posted first)
  sfc::Curve ownership = sfc::Curve::kMorton;  // the curve whose ranges ranks own
  KernelBackend kernels = KernelBackend::kNative;
  stencil::Isa isa = stencil::Isa::kBaseline;  // of the native kernels; must be supported
  int threads = 0;  // worker threads per rank (0: OpenMP's current count)
  // Static, face-only stencils: variables filled and swept per pass over the blocks. One keeps
  // a variable of a block in L1 from its ghost fills to its sweep, but every block then starts
  // a new short memory stream per variable; a few contiguous variables per pass let the
  // hardware prefetcher run (4 to 16 measured 25-35% faster than 1 on 8^3 blocks, 40 variables).
  int sweep_vars = 4;
  // Variables kept together for the cache (0: as many as fit kCacheChunkBytes per thread on the
  // fullest rank).
  // The static runtime takes each chunk through every stage of a batch before the next
  // (num_vars: stage by stage, the reference's order); the dynamic one gives each chunk a task
  // graph of its own, which can run stages ahead of the others. A variable's stages run in the
  // same order either way, so values are bitwise the same, but a chunk that stays in cache is
  // not streamed from memory at every stage; the price is a message per neighbour rank, comm
  // group and chunk in each stage.
  int chunk_vars = 0;
  // Dynamic: non-zero picks ready tasks in a random order drawn from this seed (testing).
  std::uint64_t order_seed = 0;
  // Emulated heterogeneity: this rank's work takes slow_factor times as long, plus noise.
  double slow_factor = 1.0;
  double noise = 0.0;
  // --compute model: the sweeps' calibrated cost instead of the kernels.
  std::optional<ComputeModel> compute_model;
};
using StaticOptions = RuntimeOptions;

// Storage of one chunk of variables on a rank in the automatic choice: about a core's L2.
// Measured on 2 ranks (static, 2-core Zen 4 with 1 MiB L2): the two-sphere deck (12 MB per
// variable) and the expanding sphere (0.3 MB) ran 1.3-1.6x faster in chunks of 1 to 4 variables
// than all 40 at once; in the dynamic runtime one-variable graphs more than halved the waiting
// on the two-sphere deck but cost 13% on the expanding sphere against its two-variable groups.
inline constexpr std::int64_t kCacheChunkBytes = std::int64_t(1) << 20;

class MeshRuntime : public Runtime {
 public:
  const comm::Communicator& comm() const override { return comm_; }
  Timers& timers() override { return timers_; }
  void mesh_changed(const mesh::Domain& domain) override;
  void mesh_adapted(const mesh::Domain& domain) override;
  octree::MarkMailbox& mailbox() override { return mailbox_; }
  std::int64_t rebalance(mesh::Domain& domain, std::span<const std::int64_t> weights,
                         std::span<const double> shares = {}) override;
  std::int64_t rebalance_for_adapt(
      mesh::Domain& domain, const octree::AdaptPlan& plan,
      std::span<const std::int64_t> adapted_weights, std::vector<std::int8_t>& marks,
      std::span<const double> shares = {},
      std::optional<comm::Communicator::PrefixSum> along = {}) override;
  std::int64_t gather_families(mesh::Domain& domain) override;
  std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const override;
  CurveView curve_view(const mesh::Domain& domain) const override;
  int owner(const octree::Key& k) const override { return partition_.owner(k); }
  std::int64_t migrate_blocks(mesh::Domain& domain, std::span<const int> targets) override;
  CommPartners comm_partners() const override;
  std::string graph_dot(const mesh::Domain& domain, bool edges, int stages) override;
  const StageKernels& kernels() const override { return kernels_; }
  void set_trace(Trace* trace) override { trace_ = trace; }
  int threads() const override;

  // Variables per cache chunk for stages like `first` (RuntimeOptions::chunk_vars). Collective:
  // every rank gets the same count, as their messages must match.
  int chunk_vars(const mesh::Domain& domain, const StageWork& first) const;

 protected:
  MeshRuntime(MPI_Comm parent, RuntimeOptions options);
  // The stage graph of the current mesh, for face-only (edges = false) or edge-reading stencils.
  const StageGraph& graph(const mesh::Domain& domain, bool edges);
  // Each of `leaves`' rank in the cut of the curve into equal shares of `weights` (collective),
  // families that may coarsen kept whole with their first leaf; or, when `shares` are given,
  // into shares proportional to them, each family with the rank holding most of it.
  // `along`: the weights before this rank and of all, when known.
  std::vector<int> balanced_targets(const octree::LeafSet& leaves,
                                    std::span<const std::int64_t> weights,
                                    std::span<const double> shares,
                                    std::optional<comm::Communicator::PrefixSum> along = {}) const;
  // Whether a target of this rank's blocks is another rank.
  bool sends_any(std::span<const int> targets) const;
  // Collective. Whether a target on any rank is not the block's holder.
  bool any_moves(std::span<const int> targets) const { return comm_.any(sends_any(targets)); }
  // Called at the end of mesh_changed and mesh_adapted, for the mapper's own plans.
  virtual void plans_changed(const mesh::Domain& domain) = 0;

  comm::Communicator comm_;
  RuntimeOptions options_;
  Timers timers_;
  mesh::MpiMailbox mailbox_;
  sfc::Partition partition_;
  mesh::GhostPlan plan_;
  StageKernels kernels_;
  Slowdown slowdown_;
  Trace* trace_ = nullptr;

 private:
  // Rebuilds the neighbourhood, the ghost plan and the mapper's plans over `partition`.
  void rebuild(const mesh::Domain& domain, sfc::Partition partition);
  // Collective. Sends each block to its target (migrate) and notes that the partition moved.
  std::int64_t move_blocks(mesh::Domain& domain, std::span<const int> targets,
                           std::vector<std::int8_t>* marks = nullptr);

  bool ownership_moved_ = true;  // blocks migrated since partition_ was exchanged (or none was)
  std::array<std::optional<StageGraph>, 2> graphs_;  // built on first use after a mesh change
};

}  // namespace miniamr::runtime
