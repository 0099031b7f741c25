// The dynamic mapper, in the style of the OpenTS T-system: a stage graph's nodes are tasks
// whose inputs are "non-ready values" (a counter of the inputs still missing: ghost faces of
// neighbours, messages, the previous stage). A task becomes ready when its counter reaches zero
// and runs on whichever worker thread is free (oneTBB's work-stealing task_group); no barrier
// separates stages, so a block may be stages ahead of a far-away one. Faces that cross ranks
// are packed by their producer as it ends and sent when the message's last face is in; an
// arrival makes its consumers ready. Checksum reductions stay in flight while later stages
// run. MPI is driven by one worker at a time (MPI_THREAD_SERIALIZED, a progress token), by
// whichever worker just ended a task or has nothing to do.
//
// Small blocks make small tasks: consecutive curve blocks are grouped into one task so that a
// task takes about kTargetTaskSeconds by the measured time per block. With one worker, or
// enough variable groups to keep several busy, the tasks of a stage run in curve order and each
// face for a reader in a later task (or, at the same level, a later block of its own) is packed
// at the sender's sweep, so that a task's sweep follows its fill while its blocks are in cache.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/mesh_runtime.hpp"
#include "runtime/sweep_schedule.hpp"
#include "runtime/task_pool.hpp"
#include "stencil/compact_stencil.hpp"

namespace miniamr::runtime {

class DynamicRuntime final : public MeshRuntime {
 public:
  struct Units;  // the graph grouped into tasks

  explicit DynamicRuntime(MPI_Comm parent = MPI_COMM_WORLD, RuntimeOptions options = {});
  ~DynamicRuntime() override;

  std::vector<std::vector<double>> run_stages(Domain& domain,
                                              std::span<const StageWork> stages) override;
  std::string name() const override { return "dynamic"; }

  // Blocks per task chosen for the last run_stages (for tests and reports).
  std::size_t blocks_per_task() const { return blocks_per_task_; }
  // Faces of the last run_stages packed at their sender's sweep for a reader in a later task,
  // or a later block of the sender's task (see Units).
  std::size_t deferred_faces() const;
  // Same-level faces of the last run_stages that their readers' sweeps read where the values
  // are (a later sender's layer, the deferred buffer, a message) instead of filling them.
  std::size_t faces_read_in_place() const;

  static constexpr double kTargetTaskSeconds = 40e-6;

 private:
  void plans_changed(const Domain& domain) override;

  struct Batch;  // the state of one batch of tasks
  // What the batches of one run_stages measured, for the cost records.
  struct Measured {
    std::vector<double> unit_seconds;  // per unit: time in its tasks, every variable group
    double busy = 0;                   // seconds in tasks, all workers
  };
  // Runs `stages` (their variables split into `var_groups` groups of `group_vars`) as one task
  // graph; returns the stages' checksums.
  std::vector<std::vector<double>> run_batch(Domain& domain, std::span<const StageWork> stages,
                                             int var_groups, int group_vars, Measured& measured);
  std::unique_ptr<TaskPool> pool_;  // the worker threads
  std::unique_ptr<Units> units_;
  std::vector<std::vector<double>> scratch_;  // one per worker
  // Variables of the batch being run, stored compact (as in the static mapper), and the faces
  // its sweeps read as ghosts (level changes, and same-level faces that nothing packed).
  stencil::CompactVars compact_;
  DenseGhostLayers ghost_layers_;
  std::size_t blocks_per_task_ = 1;
  double block_seconds_ = 0;  // measured seconds of one block's stage (fills and sweep)
};

}  // namespace miniamr::runtime
