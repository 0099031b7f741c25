// What both mappers share: a batch of stages run over the schedule kit (schedule_kit.hpp). The
// batch is cut into cache chunks of variables, each taken through every stage of the batch
// before the next (a variable's stages run in the same order as stage by stage, so values and
// sums are bitwise the same, but a chunk that fits in cache is read from memory once per batch);
// 7-point stages of 8^3 blocks sweep the chunk's variables stored compact where the AVX-512
// kernels run (stencil/compact_stencil.hpp); the checksum reductions, cost records and
// accounting are the same. A mapper says how the blocks are cut into units (policy) and how a
// chunk's unit steps run on its workers (run_chunk): the static one in order, phase by phase;
// the dynamic one as their inputs become ready.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "runtime/mesh_runtime.hpp"
#include "runtime/schedule.hpp"
#include "runtime/schedule_kit.hpp"

namespace miniamr::runtime {

class Mapper : public MeshRuntime {
 public:
  std::vector<std::vector<double>> run_stages(mesh::Domain& domain,
                                              std::span<const StageWork> stages) final;

  // The schedule the last run_stages ran (face-only or edge-reading), for tests and reports.
  const Schedule* schedule(bool edges) const;
  const SchedulePolicy* last_policy(bool edges) const;

 protected:
  Mapper(MPI_Comm parent, RuntimeOptions options);

  // How the blocks are cut into units for stages like `first` on this mesh, taken through in
  // chunks of `chunk` variables.
  virtual SchedulePolicy policy(const StageGraph& graph, const StageWork& first,
                                int chunk) const = 0;
  // Runs every unit step of every lane of `run` (its messages begun and primed); on return no
  // worker touches it any more.
  virtual void run_chunk(ChunkRun& run) = 0;
  // Runs body(i) for every i in [0, n) on the mapper's workers.
  virtual void for_each(std::size_t n, const std::function<void(std::size_t)>& body) = 0;

  void plans_changed(const mesh::Domain& domain) override;
  // Seconds of one block's stage (every variable), as measured so far (0: not yet).
  double block_seconds() const { return block_seconds_; }
  // With the MPI token: drives the messages and the reductions of `run`; arrivals go to
  // `arrived(lane, m)`. Returns whether anything happened.
  template <class Arrived>
  bool drive(ChunkRun& run, bool idle, int worker, Arrived&& arrived) {
    const bool messages = run.halo().progress(idle, worker, arrived);
    return run.sums().progress(comm_) || messages;
  }
  // Something useful to do while waiting: map storage for the next refinement
  // (stencil/block_pool.hpp). Only one thread may call it at a time.
  bool map_ahead(mesh::Domain& domain);

 private:
  std::vector<std::vector<double>> run_uniform(mesh::Domain& domain,
                                               std::span<const StageWork> stages);
  void run_chunks(mesh::Domain& domain, std::span<const StageWork> stages, const StageGraph& graph,
                  const Schedule& schedule, int chunk, double& copy_seconds);

  struct Cached {
    SchedulePolicy policy;
    Schedule schedule;
  };
  std::array<std::optional<Cached>, 2> schedules_;  // face-only, edge-reading
  FaceBuffers buffers_;
  HaloExchange halo_;
  StageSums sums_;
  stencil::CompactVars compact_;
  DenseGhostLayers ghost_layers_;
  std::vector<std::vector<double>> scratch_;  // per worker
  StepMeter meter_;
  double block_seconds_ = 0;
};

}  // namespace miniamr::runtime
