// The "plain MPI ranks" back end: each rank owns a contiguous range of the Morton curve and
// advances its blocks in bulk-synchronous stages, overlapping halo messages with the blocks
// that need none.
#pragma once

#include <vector>

#include "runtime/ghost_plan.hpp"
#include "runtime/mpi_mailbox.hpp"
#include "runtime/neighbourhood.hpp"
#include "runtime/runtime.hpp"
#include "runtime/sweep_schedule.hpp"
#include "sfc/curve.hpp"

namespace miniamr::runtime {

// OpenMP threads of this rank (1 without OpenMP) and the calling thread's index.
int thread_count();
int thread_index();

struct StaticOptions {
  bool blocking_send = false;  // MPI_Send instead of MPI_Isend (receives posted first)
  sfc::Curve ownership = sfc::Curve::kMorton;  // the curve whose ranges ranks own
  bool kokkos = false;  // 7- and 27-point stencils through the Kokkos back end
};

class StaticRuntime final : public Runtime {
 public:
  explicit StaticRuntime(MPI_Comm parent = MPI_COMM_WORLD, StaticOptions options = {});

  const Communicator& comm() const override { return comm_; }
  Timers& timers() override { return timers_; }
  void mesh_changed(const Domain& domain) override;
  void advance(Domain& domain, const StageWork& work, std::span<stencil::ExactSum> sums) override;
  octree::MarkMailbox& mailbox() override { return mailbox_; }
  std::int64_t rebalance(Domain& domain, std::span<const std::int64_t> weights) override;
  std::int64_t gather_families(Domain& domain) override;
  std::vector<octree::Key> initial_roots(const octree::RootGrid& grid) const override;
  CommPartners comm_partners() const override;
  std::string name() const override { return "static"; }
  // Whether this build has the Kokkos stencil back end.
  static bool has_kokkos();

 private:
  // Per-thread scratch and the sweep schedule, for the current thread count.
  void fit_threads(const Domain& domain);
  // The halo exchange of one comm group, split into phases (p4est's begin/end style):
  // post receives and send packed faces; copy on-rank faces; wait; unpack; complete sends.
  // The messages of one comm group in flight.
  struct Halo {
    std::vector<std::vector<double>> send, recv;  // per peer
    std::vector<MPI_Request> sends, recvs;
  };
  void begin_halo(const Domain& domain, const StageWork& work, stencil::VarRange group,
                  std::span<const int> axes, Halo& h);
  void fill_local(Domain& domain, stencil::VarRange vars, std::span<const int> axes, bool edges);
  void wait_receives(Halo& h);
  // Unpacks `vars` (a part of `group`) from the group's messages.
  void unpack(Domain& domain, const StageWork& work, stencil::VarRange group,
              stencil::VarRange vars, std::span<const int> axes, const Halo& h);
  void end_halo(Halo& h);
  // The stencil on `vars` of block i; its sums go to block_sums_.
  void sweep_block(Domain& domain, const StageWork& work, stencil::VarRange vars, std::size_t i,
                   std::vector<double>& scratch);
  void add_block_sums(std::span<const std::size_t> blocks, const StageWork& work,
                      stencil::VarRange vars, std::span<stencil::ExactSum> sums);
  // All blocks, ghosts already filled (27-point and variable work).
  void sweep_all(Domain& domain, const StageWork& work, stencil::VarRange vars,
                 std::span<stencil::ExactSum> sums);
  // Phase 0 (self-contained blocks) or 1 (the rest) of the 7-point schedule, each block's
  // on-rank ghost tasks run just before it.
  void sweep_phase(Domain& domain, const StageWork& work, stencil::VarRange vars,
                   std::span<stencil::ExactSum> sums, int phase);
  static void run_tasks(Domain& domain, std::span<const GhostTask> tasks, stencil::VarRange vars);

  Communicator comm_;
  StaticOptions options_;
  Timers timers_;
  MpiMailbox mailbox_;
  sfc::Partition partition_;
  GhostPlan plan_;
  SweepSchedule schedule_;
  std::vector<std::vector<double>> scratch_;  // one per thread
  std::vector<double> block_sums_;            // per block and variable of one sweep
  std::vector<Halo> halos_;                   // one per comm group
  std::vector<double> stage_cost_;            // seconds of each block in the current stage
};

}  // namespace miniamr::runtime
