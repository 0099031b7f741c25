// What a run has counted and measured: the reports read it, and a checkpoint carries it on.
#pragma once

#include <cstdint>
#include <vector>

namespace miniamr::app {

// What a run measured, for the reports. Counts are global unless named *_rank.
struct RunStats {
  int timesteps_done = 0;
  double sim_time = 0.0;
  std::int64_t stages_done = 0;
  std::int64_t stage_batches = 0;    // batches of stages run since this process started
  std::int64_t block_stage_sum = 0;  // sum over stages of the global leaf count
  std::int64_t max_blocks_rank = 0;  // peak blocks held on this rank (inside refinement)
  std::int64_t refine_steps = 0;
  std::int64_t blocks_split = 0;
  std::int64_t blocks_reformed = 0;  // families merged into their parent
  std::int64_t closure_rounds = 0;
  std::int64_t closure_changes_sent = 0;  // mark changes sent to other ranks by the consensus
  std::int64_t load_balances = 0;
  std::int64_t blocks_moved_lb = 0;
  std::int64_t blocks_moved_coarsen = 0;  // siblings gathered onto one rank so they may merge
  std::int64_t final_blocks = 0;
  std::vector<std::int64_t> final_level_counts;
  // Blocks per level after each refinement step (the progress tables, machine-readable).
  struct MeshSnapshot {
    int timestep = 0;
    std::vector<std::int64_t> blocks_per_level;
  };
  std::vector<MeshSnapshot> mesh_history;
  // What each refinement step run by this process asked of MPI (the balancing after it
  // included): global collectives (the same count on every rank), closure rounds, the
  // point-to-point messages this rank sent (the report takes the most of any rank), and the
  // blocks all ranks migrated (families gathered, cuts before splitting, the balance after).
  struct StepTraffic {
    int timestep = 0;
    std::int64_t collectives = 0, closure_rounds = 0, messages = 0, blocks_moved = 0;
  };
  std::vector<StepTraffic> refine_traffic;
  std::int64_t cell_var_updates_rank = 0;  // interior cell-variable stencil updates on this rank
  std::vector<double> initial_checksums;
  std::vector<double> final_checksums;
  std::uint64_t field_digest = 0;  // order-independent hash of every block's key and data
};

}  // namespace miniamr::app
