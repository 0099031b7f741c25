// What both mappers share: a batch of stages run over the schedule kit (schedule_kit.hpp). The
// batch is cut into cache chunks of variables, each taken through every stage of the batch
// before the next (a variable's stages run in the same order as stage by stage, so values and
// sums are bitwise the same, but a chunk that fits in cache is read from memory once per batch);
// 7-point stages of 8^3 blocks sweep the chunk's variables stored compact where the AVX-512
// kernels run (stencil/compact_stencil.hpp); the checksum reductions, cost records and
// accounting are the same. A mapper says how the blocks are cut into units (policy) and how a
// chunk's unit steps run on its workers (run_chunk): the static one in order, phase by phase;
// the dynamic one as their inputs become ready. A mapper holds the mesh whose stages it runs
// (mesh/mesh.hpp: ownership, plans, migration, driven by the app between batches) and remakes its
// stage graphs and schedules when the mesh's generation moves on.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "mesh/mesh.hpp"
#include "runtime/runtime.hpp"
#include "runtime/schedule.hpp"
#include "runtime/schedule_kit.hpp"
#include "runtime/slowdown.hpp"
#include "runtime/stage_graph.hpp"
#include "sfc/curve.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::runtime {

// OpenMP threads of this rank (1 without OpenMP) and the calling thread's index.
int thread_count();
int thread_index();

struct RuntimeOptions {
  bool blocking_send = false;  // MPI_Send instead of MPI_Isend (static; receives posted first)
  sfc::Curve ownership = sfc::Curve::kMorton;  // the curve whose ranges ranks own
  // No leaf is deeper (num_refine): the partition's positions then fit in 8 bytes a rank where
  // the root grid allows (mesh::exchange_partition).
  int deepest_level = octree::kMaxLevel;
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
// The fewest variables of an automatic chunk. Measured on 2 ranks (2-core AMD EPYC with AVX-512,
// 2 MiB L2, both runtimes): two variables a chunk ran the two-sphere deck (1.8 MB per variable on
// a rank) 5-10% faster than one, and the expanding sphere with 20 variables in groups of two 14%
// faster than one, beyond the budget above in both.
inline constexpr int kMinChunkVars = 2;
// How far the slowest unit of a part of the order may be above the part's mean over a batch, as a
// fraction of a worker's time in unit steps, before the units are cut again by measured cost.
inline constexpr double kRecutImbalance = 0.02;

class Mapper : public Runtime {
 public:
  mesh::Mesh& mesh() final { return mesh_; }
  const mesh::Mesh& mesh() const final { return mesh_; }
  Timers& timers() final { return timers_; }
  std::string graph_dot(const mesh::Domain& domain, bool edges, int stages) final;
  const StageKernels& kernels() const final { return kernels_; }
  void set_trace(Trace* trace) final { trace_ = trace; }
  int threads() const final;
  const Slowdown& slowdown() const final { return slowdown_; }

  // Variables per cache chunk for stages like `first` (RuntimeOptions::chunk_vars). Collective:
  // every rank gets the same count, as their messages must match.
  int chunk_vars(const mesh::Domain& domain, const StageWork& first) const;

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

  // Seconds of one block's stage (every variable), as measured so far (0: not yet).
  double block_seconds() const { return block_seconds_; }
  // With the MPI token: drives the messages and the reductions of `run`; arrivals go to
  // `arrived(lane, m)`. Returns whether anything happened.
  template <class Arrived>
  bool drive(ChunkRun& run, bool idle, int worker, Arrived&& arrived) {
    const bool messages = run.halo().progress(idle, worker, arrived);
    return run.sums().progress(mesh_.comm()) || messages;
  }
  // Something useful to do while waiting: map storage for the next refinement
  // (stencil/block_pool.hpp). Only one thread may call it at a time.
  bool map_ahead(mesh::Domain& domain);

  // The stage graph of the current mesh, for face-only (edges = false) or edge-reading stencils.
  const StageGraph& graph(const mesh::Domain& domain, bool edges);

  mesh::Mesh mesh_;
  RuntimeOptions options_;
  Timers timers_;
  StageKernels kernels_;
  Slowdown slowdown_;
  Trace* trace_ = nullptr;

 private:
  // Forgets the graphs and schedules of an older mesh (mesh::Mesh::generation).
  void follow_mesh(const mesh::Domain& domain);
  std::vector<std::vector<double>> run_uniform(mesh::Domain& domain,
                                               std::span<const StageWork> stages);
  void run_chunks(mesh::Domain& domain, std::span<const StageWork> stages, const StageGraph& graph,
                  const Schedule& schedule, int chunk, double& copy_seconds);

  struct Cached {
    SchedulePolicy policy;
    Schedule schedule;
    bool recut = false;  // its units took too unequal times: cut them again (by_cost)
  };
  std::uint64_t generation_ = 0;  // of the mesh the graphs and schedules below were made for
  std::array<std::optional<StageGraph>, 2> graphs_;  // face-only, edge-reading; made when needed
  std::array<std::optional<Cached>, 2> schedules_;   // face-only, edge-reading
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
