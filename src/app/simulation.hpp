// The driver loop: initial mesh and data, refinement steps, timesteps of stages, checksums.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/config.hpp"
#include "app/field_plot.hpp"
#include "app/load_balancer.hpp"
#include "app/memory_budget.hpp"
#include "app/run_stats.hpp"
#include "app/timeline.hpp"
#include "mesh/domain.hpp"
#include "runtime/runtime.hpp"
#include "runtime/trace.hpp"
#include "sfc/partition.hpp"
#include "sfc/shares.hpp"
#include "stencil/exact_sum.hpp"
#include "stencil/variable_kernels.hpp"

namespace miniamr::app {

struct RunPoint;  // checkpoint.hpp

class Simulation {
 public:
  // `out` receives the progress lines on rank 0 (nullptr elsewhere or when silenced).
  // A mesh that outgrows `budget` during refinement ends the run with a RunError on every rank.
  Simulation(const Config& config, runtime::Runtime& runtime, std::FILE* out,
             runtime::Trace* trace = nullptr, MemoryBudget budget = {});

  // Runs the whole schedule. Throws RunError on a failed checksum or a --max_blocks overflow.
  void run();

  const RunStats& stats() const { return stats_; }
  // The dynamic runtime's balancer (nullptr with the static runtime).
  const LoadBalancer* balancer() const { return balancer_.get(); }
  const std::vector<Object>& objects() const { return objects_; }
  const mesh::Domain& domain() const { return domain_; }
  const mesh::Mesh& mesh() const { return mesh_; }

 private:
  void init_mesh();
  // The mesh, data and time-loop state of --restart's checkpoint, in place of init_mesh and the
  // first refinement.
  RunPoint restore();
  void refine_step(int ts, int iterations);
  // After refinement step `ts`: how many spare blocks to map ahead of the next one.
  void expect_storage(int ts);
  // The mesh's totals after a refinement step: blocks per level, the spread of the ranks'
  // blocks, and the step's counts (step_counts_) summed over the ranks.
  struct StepTotals {
    std::vector<std::int64_t> per_level;
    sfc::LoadSpread spread;
    std::array<std::int64_t, 3> counts{0, 0, 0};
  };
  // One iteration of a refinement step: marks, closure, plan, cut and adaptation, with at most
  // `iterations_left` more to follow. Returns the step's totals when the iteration changed
  // nothing (the step is over; they came with its tally), else nothing.
  std::optional<StepTotals> refine_iteration(int iterations_left);
  // Adapts the local blocks to `plan` (collective). `peak` is this rank's most blocks while it
  // does: a rank over --max_blocks or its memory stops every rank before any allocates.
  void apply_plan(const octree::AdaptPlan& plan, std::int64_t peak);
  void check_peak(std::int64_t peak) const;
  // Collective, at the start of refinement step `ts`: the shares its cuts give the ranks (none
  // given: the count cut into equal shares), or nothing when it makes none (one rank, or a
  // dynamic balancer that does not cut).
  std::optional<sfc::Shares> refinement_shares(int ts);
  bool equal_shares() const;  // of cut_shares_, which holds a value
  // Whether a leaf's cut weight is the same before and after an adaptation (it depends neither
  // on its neighbours nor on measurements), so that a cut of the adapted leaves made before the
  // adaptation is the cut the balance after it would make.
  bool weights_survive_adaptation() const;
  // Cuts the current leaves into cut_shares_ when the counts call for it.
  // `known`: the spread of the ranks' blocks as they are, if already reduced.
  // `unchanged`: after a refinement step that neither adapted nor moved a leaf, when the dynamic
  // balancer's re-cut is made only if it pays (LoadBalancer::recut_pays).
  void maybe_rebalance(bool report, std::optional<sfc::LoadSpread> known = std::nullopt,
                       bool unchanged = false);
  // The cut's weight of each leaf of `plan`: cut_weights carried to the adapted leaves, a leaf
  // that `iterations_left` more iterations will split (where `wanted` refines: the marks alone)
  // weighing as the leaves it becomes (octree::leaves_after).
  std::vector<std::int64_t> adapted_weights(
      const octree::AdaptPlan& plan, int iterations_left,
      const std::function<int(const octree::Key&)>& wanted) const;
  // What balance_before_adapt did: nothing (the mesh needs no cut), a cut that moved no block,
  // or one that moved blocks (the plan must then be made again from the new leaves).
  enum class CutBeforeAdapt { kNone, kHeld, kMoved };
  // Collective. Cuts the adapted leaves' curve (weights `adapted`; `leaves`: the ranks' adapted
  // leaf counts; `along`: the weight before this rank and in all) and moves the leaves they
  // come from.
  CutBeforeAdapt balance_before_adapt(const octree::AdaptPlan& plan,
                                      std::span<const std::int64_t> adapted,
                                      const sfc::LoadSpread& leaves,
                                      comm::Communicator::PrefixSum along,
                                      std::vector<std::int8_t>& marks);
  std::vector<std::int64_t> block_weights() const;
  // The dynamic balancer's model weights: each block's cell-variable updates per stage, or the
  // cost model's weights (--lb_weight 1). Measured seconds (--lb_weight 2) only weigh its
  // decisions: a refinement's new blocks have none yet, and a replayed cut must not depend on
  // them.
  std::vector<std::int64_t> balance_weights() const;
  // The weights a refinement step's cuts use: block_weights (static), balance_weights (dynamic).
  std::vector<std::int64_t> cut_weights() const;
  // The stages a cut made after timestep `ts` runs before the next refinement step cuts again,
  // or the run ends.
  double balance_horizon(int ts) const;
  void print_comm_partners() const;
  // How many timesteps from `ts` run their stages as one batch (no barrier between them where
  // the runtime needs none; the static one takes each cache chunk of variables through all of
  // them): up to --batch_tsteps, ending at the first timestep after which the blocks are read
  // or changed (refinement, a plot, a checkpoint, a balancing decision of the dynamic
  // runtime). `fixed_steps`: the run ends at num_tsteps (no --time).
  int batch_length(int ts, bool fixed_steps) const;
  // Runs the stages of `timesteps` timesteps from the next one; their sums wait in batch_totals_.
  void run_batch(int timesteps);
  // The statistics and checksum checks of the batch's timestep k (from 0), in timestep order:
  // the stages all ran before, so a failed check names its timestep as before, only later.
  void account_timestep(int k);
  // Whether stage s of a batch (from 0, its timesteps' stages one after the other) reduces
  // checksums: every checksum_freq-th stage of each timestep, from its first.
  bool checksum_stage(std::size_t s) const {
    return config_.checksum_freq > 0 &&
           int(s % std::size_t(config_.stages_per_ts)) % config_.checksum_freq == 0;
  }
  void write_graph() const;
  void trace_event(std::string_view name, double start_us, std::int64_t ts) const;
  std::vector<double> global_checksums(std::span<stencil::ExactSum> sums) const;
  std::vector<double> current_checksums() const;
  std::uint64_t field_digest() const;
  void check_sums(const std::vector<double>& sums);
  // Blocks per level over all ranks, in one reduction with `more` (this rank's counts, summed
  // over the ranks) and, when asked for, the `spread` of the ranks' block counts.
  std::vector<std::int64_t> level_counts(std::span<std::int64_t> more = {},
                                         sfc::LoadSpread* spread = nullptr) const;
  // This rank's `keys` per level (0 .. num_refine), then `more`: what level_counts and the
  // refinement's tally sum over the ranks.
  std::vector<std::int64_t> leaves_per_level_then(std::span<const octree::Key> keys,
                                                  std::span<const std::int64_t> more) const;
  // The spread of the ranks' block counts, in one reduction.
  sfc::LoadSpread block_spread() const;
  void print_level_table(int ts, const std::vector<std::int64_t>& counts);
  // The same on every rank: whether the verbose lines are made (collectives included).
  bool verbose_run() const {
    return (config_.report_perf & 8) && config_.verbosity == Verbosity::kVerbose;
  }
  // Whether this rank prints them.
  bool verbose_output() const { return out_ != nullptr && verbose_run(); }
  // The plot of timestep `ts`, reached at simulated time `time`, in --plot_format.
  void write_plot(int ts, double time);
  void write_text_plot(int ts) const;
  bool adapting() const { return adapts(config_); }

  Config config_;
  runtime::Runtime& runtime_;
  mesh::Mesh& mesh_;  // the runtime's
  std::FILE* out_;
  runtime::Trace* trace_;
  MemoryBudget budget_;
  std::vector<std::int64_t> printed_counts_;  // the block table last printed
  mesh::Domain domain_;
  std::vector<Object> objects_;
  stencil::VariableCoeffs coeffs_;
  std::vector<double> previous_sums_;
  std::int64_t global_blocks_ = 0;  // leaves on all ranks; changes only in refinement steps
  int timestep_ = 0;
  std::int64_t calc_stage_ = 0;
  std::vector<std::vector<double>> batch_totals_;  // per stage of the last batch: checksums
  RunStats stats_;
  // This rank's share of three counters of the current refinement step (families gathered,
  // mark changes sent, blocks moved by the cuts before splitting), summed over the ranks once at
  // its end rather than at every iteration.
  std::array<std::int64_t, 3> step_counts_{0, 0, 0};
  std::uint64_t adaptations_ = 0;  // applied plans, naming each to the slowdown's noise
  std::unique_ptr<LoadBalancer> balancer_;
  std::optional<sfc::Shares> cut_shares_;  // of the refinement step under way
  // Whether the step's last adaptation was cut into cut_shares_ before it was made.
  bool adapted_mesh_cut_ = false;
  // The last re-cut after a step (maybe_rebalance): the plans' generation it left and the shares
  // it cut by. A cut is a function of the leaves, their weights and the shares, so the same
  // re-cut of a mesh that neither adapted nor migrated since (the same generation) moves nothing.
  struct StandingCut {
    std::uint64_t generation = 0;
    sfc::Shares shares;
  };
  std::optional<StandingCut> standing_cut_;
  std::unique_ptr<FieldPlot> field_plot_;  // with --plot_format xdmf or vtkhdf
};

}  // namespace miniamr::app
