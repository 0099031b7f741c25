// The static mapper, "plain MPI ranks": each rank runs its part of the stage graph in
// bulk-synchronous stages, one cache chunk of variables at a time (each chunk through every
// stage of the batch before the next; RuntimeOptions::chunk_vars). Face-only stencils follow
// the sweep schedule (each on-rank face filled at the sweep of the first of its two blocks;
// blocks that need no remote ghost swept while messages are in flight); stencils that read
// edges fill every block's x, then y, then z ghosts, then sweep. Messages go one per neighbour
// rank, comm group and chunk.
#pragma once

#include <array>
#include <vector>

#include "runtime/mesh_runtime.hpp"
#include "runtime/sweep_schedule.hpp"
#include "stencil/compact_stencil.hpp"
#include "stencil/exact_sum.hpp"

namespace miniamr::runtime {

class StaticRuntime final : public MeshRuntime {
 public:
  explicit StaticRuntime(MPI_Comm parent = MPI_COMM_WORLD, RuntimeOptions options = {});

  std::vector<std::vector<double>> run_stages(Domain& domain,
                                              std::span<const StageWork> stages) override;
  std::string name() const override { return "static"; }

 private:
  void plans_changed(const Domain& domain) override;
  // Per-thread scratch and the sweep schedule, for the current thread count.
  void fit_threads(const Domain& domain);
  // The variables of `part` (inside work.vars) through one stage; `sums` covers work.vars.
  void stage(Domain& domain, const StageWork& work, stencil::VarRange part,
             std::span<stencil::ExactSum> sums);

  // The messages of one comm group in flight (p4est's begin/end style): post receives and send
  // packed faces; wait; unpack; complete sends.
  struct Halo {
    std::vector<std::vector<double>> send, recv;  // per message
    std::vector<MPI_Request> sends, recvs;
  };
  void begin_halo(const Domain& domain, const StageGraph& graph, int group_index,
                  stencil::VarRange vars, Halo& h);
  // Completes `requests`, mapping spare block storage while they are not done.
  void wait_for(std::vector<MPI_Request>& requests, Domain& domain);
  void wait_receives(Domain& domain, Halo& h);
  // Unpacks `vars` (a part of the group's `group` variables) from the group's messages; in a
  // `scheduled` (face-only) stage, only the faces the sweeps do not read from the messages.
  void unpack(Domain& domain, const StageGraph& graph, int group_index, stencil::VarRange group,
              stencil::VarRange vars, const Halo& h, bool scheduled);
  void end_halo(Domain& domain, Halo& h);
  // Sweeps block i, with the ghost faces of a 7-point stage read from `layers` (those of
  // variable vars.v0; a compact sweep steps them on to the last variable) when given.
  void sweep_block(Domain& domain, const StageWork& work, stencil::VarRange vars, std::size_t i,
                   std::vector<double>& scratch, stencil::GhostLayers* layers = nullptr);
  // The layers that block i's sweep of `pass` (variables of comm group `group`, whose messages
  // are `h`) reads as its ghost faces (SweepSchedule::reads), and the layers it copies out into
  // the deferred-face buffer (SweepSchedule::copies), for variable pass.v0.
  stencil::GhostLayers pass_layers(const Domain& domain, std::size_t i, stencil::VarRange pass,
                                   stencil::VarRange group, const Halo& h);
  void add_block_sums(std::span<const std::size_t> blocks, const StageWork& work,
                      stencil::VarRange vars, std::span<stencil::ExactSum> sums);
  // Stencils reading edges: every block's ghosts of one axis, then the next axis.
  void fill_axis(Domain& domain, const StageGraph& graph, int axis, stencil::VarRange vars);
  void sweep_all(Domain& domain, const StageWork& work, stencil::VarRange vars,
                 std::span<stencil::ExactSum> sums);
  // Phase 0 (self-contained blocks) or 1 (the rest) of the 7-point schedule, each block's
  // on-rank ghost tasks run just before it.
  void sweep_phase(Domain& domain, const StageWork& work, stencil::VarRange vars,
                   std::span<stencil::ExactSum> sums, int phase, stencil::VarRange group,
                   const Halo& h);
  void run_tasks(Domain& domain, std::span<const GhostTask> tasks, stencil::VarRange vars);

  SweepSchedule schedule_;
  bool schedule_stale_ = true;                // the mesh changed since schedule_ was built
  std::vector<std::vector<double>> scratch_;  // one per thread
  std::vector<double> block_sums_;            // per block and variable of one sweep
  // The chunk's variables stored compact while its 7-point stages run, where the kernels can
  // sweep them so (StageKernels::compact, one thread).
  stencil::CompactVars compact_;
  // The faces a compact sweep reads as ghosts (level changes), for the pass's variables.
  DenseGhostLayers ghost_layers_;
  // Faces for a later receiver, made at their sender's sweep (SweepSchedule): copied out by it
  // (same level) or packed before it (level changes).
  std::vector<double> deferred_;
  std::vector<Halo> halos_;         // one per comm group
  std::vector<double> stage_cost_;  // seconds of each block (fastest) in each stage of a batch
  std::size_t stage_slot_ = 0;      // the running stage's index in its batch
};

}  // namespace miniamr::runtime
