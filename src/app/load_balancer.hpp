// The dynamic runtime's balancer in the style of OpenTS: block ownership follows the measured
// speeds of the ranks. Each rank measures its own speed (model work per second of compute) after
// every batch of timesteps, so a slow rank is seen as slow rather than as holding heavy blocks.
// At a refinement step the adapted mesh is cut into shares proportional to the speeds (equal
// where they agree within the noise); between refinements, at a decision, runtime/balance.hpp
// proposes a cut and takes it only when its gain beats the measured noise and the migration
// cost (bytes over the link speed measured at start-up). The measurement, the summaries (one
// gather: rank 0 decides and tells the others), the proposal, the verdict, the migration and the
// log are separate steps here.
// Cuts and decisions can be logged (one JSON line each) and replayed.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/lb_replay.hpp"
#include "mesh/domain.hpp"
#include "mesh/ownership_directory.hpp"
#include "runtime/balance.hpp"
#include "runtime/link_model.hpp"
#include "runtime/runtime.hpp"
#include "sfc/shares.hpp"

namespace miniamr::app {

struct BalanceStats {
  std::int64_t decisions_taken = 0;
  std::int64_t decisions_skipped = 0;
  std::int64_t refinement_cuts = 0;                // refinement steps cut by the speeds
  std::int64_t blocks_migrated = 0;                // all ranks, by cuts and decisions
  std::int64_t blocks_migrated_at_refinement = 0;  // all ranks, by the cuts
  std::int64_t bytes_migrated = 0;                 // all ranks
  double final_imbalance = 1.0;      // max over mean of the rank times predicted at the end
  std::vector<double> final_shares;  // each rank's fraction of the work at the end (rank 0)
  struct Sample {
    int timestep = 0;
    std::vector<double> seconds_per_stage;  // predicted, per rank, before the cut or decision
    double imbalance = 1.0;
    bool moved = false;
  };
  std::vector<Sample> history;  // rank 0 only
};

class LoadBalancer {
 public:
  // Collective: measures the link between ranks. Throws UsageError for a bad --lb_replay file.
  LoadBalancer(const Config& config, runtime::Runtime& runtime);

  // After each batch of `stages` stages: this rank's work per stage then (the sum of its blocks'
  // model weights), its blocks, and its seconds in unit steps so far (Timers::steps).
  void ran(std::int64_t work, std::int64_t blocks, int stages, double step_seconds);

  // Collective, once at the start of refinement step `ts`: the shares (the same on every rank,
  // as mesh::Mesh::rebalance takes them) to cut the adapted mesh by, or nothing when this
  // balancer does not cut (one rank, --lb none).
  std::optional<sfc::Shares> refinement_shares(int ts);
  // Collective, at refinement step `ts` when it changed nothing (no leaf adapted or moved), before
  // the re-cut by its shares. That re-cut moves blocks as a decision does, and is made only when
  // it pays: runtime::balance::accept on the proposal of a curve cut by the step's speeds over
  // `horizon_stages`, judged by its gain against the migration's price alone (the speeds were
  // settled against the noise, and the mesh's own imbalance is not what changed). When it does
  // not pay the partition keeps the speeds it was cut by. Replayed: as logged (a refinement
  // line's "recut": false).
  bool recut_pays(int ts, double horizon_stages);
  // After that step's cuts: the blocks they moved (all ranks).
  void refinement_moved(int ts, std::int64_t blocks);
  // A migration made outside a decision (such a re-cut), `seconds` long, `sent` blocks from this
  // rank: what it cost beyond its bytes (the plans rebuilt) prices the moves of the next
  // proposals, as a decision's own migration does.
  void migrated(double seconds, std::int64_t sent);

  // Whether a decision is due after timestep `ts` (a batch of timesteps ends there): every
  // --lb_freq timesteps, and at a recheck.
  bool decides_after(int ts) const;
  // After refinement step `ts` (called alike on every rank), which made the mesh more than twice
  // as large: a decision after the next timestep as well (a recheck), measured on the grown mesh,
  // when the step's cut had no measured speeds to go by (nothing ran before it) or found the
  // ranks apart (their shares, measured on the smaller mesh, are checked). Speeds that agreed
  // stand: the growth changes the blocks, not the ranks, and a batch ended for a decision costs a
  // copy of every variable into compact storage and out (two spheres for 10 timesteps: 6% of
  // the dynamic runtime's time).
  void mesh_grew(int ts) {
    if (cut_needs_check_) recheck_ = ts + 1;
  }
  // Collective, after timestep `ts` where a decision is due and no refinement step came.
  // `unit_weights`: each block's model weight (as ran()'s work); `horizon_stages`: the stages a
  // new cut would run before the next re-cut.
  void decide(int ts, mesh::Domain& domain, std::span<const std::int64_t> unit_weights,
              const std::vector<Object>& objects, double delta, double horizon_stages);

  // Collective. Records the final shares and writes the decision log (rank 0, atomically);
  // throws RunError on failure.
  void finish(std::int64_t work, std::int64_t blocks);

  const BalanceStats& stats() const { return stats_; }
  const runtime::LinkModel& link() const { return link_; }

 private:
  // Where this rank's blocks begin along the curve (its offset in the work of all) and its
  // measured speed, as rank 0 works them out from the summaries.
  struct Placement {
    std::int64_t offset = 0;
    double speed = 0;
  };
  // What a decision came to: this rank's targets along the curve and why (the reason and the
  // proposal on rank 0), and, when it is taken, this rank's placement.
  struct Outcome {
    std::vector<int> targets;
    bool take = false;
    std::string reason;
    std::optional<runtime::balance::Proposal> proposal;
    Placement placement;
  };
  // Collective: every rank's summary on rank 0 (empty elsewhere), this rank's built from `work`
  // and `blocks`. Rank 0 alone decides from them: P summaries on one rank, where an allgather
  // put P^2 in all (3.7 GB at 4096 simulated ranks).
  std::vector<runtime::balance::RankSummary> summaries(std::int64_t work,
                                                       std::int64_t blocks) const;
  // Collective: this rank's placement, from rank 0's `ranks`.
  Placement placement(std::span<const runtime::balance::RankSummary> ranks) const;
  std::vector<std::int64_t> curve_weights(const mesh::Domain& domain,
                                          std::span<const std::size_t> order,
                                          std::span<const std::int64_t> unit_weights,
                                          const std::vector<Object>& objects, double delta) const;
  // Collective: rank 0 proposes and judges (`ranks` there), every rank gets the verdict.
  Outcome judged(std::span<const runtime::balance::RankSummary> ranks,
                 std::span<const std::int64_t> weights, double horizon_stages);
  // Collective: the logged decision's targets, and this rank's placement when it moves blocks.
  Outcome replayed(int ts, const mesh::Domain& domain, std::span<const std::size_t> order,
                   std::span<const runtime::balance::RankSummary> ranks) const;
  // Collective: moves the blocks, checks where they arrived; returns the blocks moved (all ranks).
  std::int64_t migrate(int ts, mesh::Domain& domain, const mesh::CurveView& view,
                       std::span<const int> targets, double speed);
  // Collective when logging: the line of a decision.
  void log_decision(int ts, const mesh::Domain& domain, std::span<const std::size_t> order,
                    const Outcome& o, std::span<const runtime::balance::RankSummary> ranks);
  void record(int ts, std::span<const runtime::balance::RankSummary> ranks, bool moved);
  // The bytes one block takes in a migration (its data and its header).
  double block_bytes() const;

  Config config_;
  runtime::Runtime& rt_;
  runtime::LinkModel link_;
  // Who owns each block that moved: the giver puts, one fence, then anyone gets locally.
  mesh::OwnershipDirectory directory_;
  runtime::balance::Strategy strategy_;
  runtime::balance::AcceptRule rule_;
  BalanceStats stats_;
  ReplayLog replay_;  // --lb_replay: cuts and moves by timestep
  std::string log_;   // rank 0: --lb_log lines, written at finish()

  // This rank's measurements.
  runtime::balance::SpeedWindow window_;
  double last_steps_ = 0;
  double seconds_per_stage_ = 0;        // over the last batch
  double rebuild_s_ = 0;                // the last migration's time beyond its bytes
  std::int64_t work_ = 0, blocks_ = 0;  // at the last batch

  // Rank 0's (empty or unused elsewhere): what its decisions and cuts remember.
  std::vector<double> speeds_;           // relative speeds of the last cut taken (settled_speeds)
  std::vector<double> standing_speeds_;  // speeds_ before the refinement step under way
  runtime::balance::Hysteresis hysteresis_;
  double last_measured_max_ = 0;  // measured max seconds per stage, last decision
  // The same on every rank.
  int recheck_ = -1;  // a timestep after which a decision is due (mesh_grew)
  int batches_ = 0;   // batches measured (ran)
  // Whether the last refinement step's cut came from no measurement or from unequal shares.
  bool cut_needs_check_ = true;
  // The refinement step under way: its shares (every rank) and the summaries they came from
  // (rank 0).
  sfc::Shares cut_shares_;
  // Why the re-cut of the refinement step under way was not made (recut_pays), or empty.
  std::string recut_declined_;
  // Doubles of the shares' one broadcast (their count, then sfc::Shares::packed: 3 + 2 per rank
  // that differs from the rest); more go in a second.
  static constexpr std::size_t kSharesInline = 64;
  std::vector<runtime::balance::RankSummary> cut_ranks_;
};

}  // namespace miniamr::app
