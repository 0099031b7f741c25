// The dynamic runtime's balancer in the style of OpenTS: between timesteps, block ownership
// moves between ranks from measured costs. Each rank knows its own speed (model work done per
// second of compute), so a slow rank is seen as slow rather than as holding heavy blocks; a
// strategy (runtime/balance_strategies.hpp) proposes new owners, the plan is charged with its
// migration cost (bytes over the link speed measured at start-up) against the expected gain over
// the next interval, and taken only when it pays. Decisions can be logged (one JSON line each)
// and replayed.
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
#include "runtime/domain.hpp"
#include "runtime/link_model.hpp"
#include "runtime/ownership_directory.hpp"
#include "runtime/runtime.hpp"

namespace miniamr::app {

struct BalanceStats {
  std::int64_t decisions_taken = 0;
  std::int64_t decisions_skipped = 0;
  std::int64_t blocks_migrated = 0;  // all ranks
  std::int64_t bytes_migrated = 0;   // all ranks
  double final_imbalance = 1.0;      // max over mean of the last predicted rank times
  struct Sample {
    int timestep = 0;
    std::vector<double> seconds_per_stage;  // predicted, per rank, before the decision
    double imbalance = 1.0;
    bool moved = false;
  };
  std::vector<Sample> history;  // rank 0 only
};

class LoadBalancer {
 public:
  // Collective: measures the link between ranks. Throws UsageError for a bad --lb_replay file.
  LoadBalancer(const Config& config, runtime::Runtime& runtime);

  // Collective, at the end of timestep `ts`. `updates` and `compute_seconds` are this rank's
  // totals so far (cell-variable updates, seconds in stage work); `objects` where they are now.
  void step(int ts, runtime::Domain& domain, std::int64_t updates, double compute_seconds,
            const std::vector<Object>& objects, double delta);

  // Collective. Writes the decision log (rank 0, atomically); throws RunError on failure.
  void finish();

  const BalanceStats& stats() const { return stats_; }
  const runtime::LinkModel& link() const { return link_; }
  // The owner of a block that moved at the last decision (local).
  std::optional<int> moved_to(const octree::Key& key) const { return directory_.get(key); }

 private:
  std::vector<int> replayed_targets(int ts, const runtime::Domain& domain,
                                    std::span<const std::size_t> order) const;
  std::vector<std::int64_t> forecast(const runtime::Domain& domain,
                                     std::span<const std::size_t> order,
                                     std::span<const std::int64_t> weights,
                                     const std::vector<Object>& objects, double delta) const;

  Config config_;
  runtime::Runtime& rt_;
  runtime::LinkModel link_;
  // Who owns each block that moved: the giver puts, one fence, then anyone gets locally.
  runtime::OwnershipDirectory directory_;
  BalanceStats stats_;
  std::int64_t last_updates_ = 0;
  double last_compute_ = 0;
  std::string log_;               // rank 0: --lb_log lines, written at finish()
  ReplayLog replay_;              // --lb_replay: moves per timestep
  double last_measured_max_ = 0;  // measured max seconds per stage, last decision
  std::vector<double> speeds_;    // every rank's last measured speed (0: never)
};

}  // namespace miniamr::app
