// The end report of a run, gathered on rank 0 (report.cpp), as text with the reference's
// Summary line (report_text.cpp) and as the results file (results_file.cpp).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "app/placement_plan.hpp"
#include "app/simulation.hpp"
#include "comm/mpi.hpp"
#include "runtime/runtime.hpp"

namespace miniamr::app {

struct Report {
  Config config;
  std::vector<Object> final_objects;
  std::string runtime_name;
  // A simulated run (the SMPI build): its times are the simulator's, on `platform`.
  bool simulated = false;
  std::string platform;
  std::string host_allocator;  // the simulator's allocator (SimulatedPlatform::host_allocator)
  int ranks = 1;
  int threads = 1;                    // worker threads per rank
  std::string stencil_backend;        // the kernels that actually ran
  std::string kernel_isa;             // instruction-set level of the native kernels
  runtime::KernelCalls kernel_calls;  // all ranks
  RunStats stats;
  BalanceStats balance;     // the dynamic runtime's balancer
  runtime::LinkModel link;  // its price of moving data
  bool balanced_dynamically = false;
  // Per rank, seconds: busy in stage work, in halo communication (dynamic: waiting for work),
  // in checksum reductions, refinement and balancing, and the rest of the time loop (idle);
  // together the time loop.
  std::vector<double> busy_per_rank, comm_per_rank, idle_per_rank;
  std::vector<double> checksum_per_rank, refine_per_rank, balance_per_rank;
  std::vector<double> blocks_per_rank, peak_rss_per_rank;  // final blocks; bytes
  // System time: seconds each rank's process spent in the kernel (getrusage), start-up included,
  // and their largest: page faults, mostly. A simulation's ranks share one process.
  std::vector<double> system_per_rank;
  double system_max = 0;
  // How the ranks started (mpirun or spawn) and where each runs: its host as MPI names it and,
  // for a spawned worker placed by a plan, the host the plan gave it ("" otherwise).
  Placement placement;
  std::vector<std::string> rank_hosts, planned_hosts;
  // Where and when the run happened (rank 0's view).
  std::string host, date_utc, batch_job;
  std::int64_t max_blocks = 0;  // peak blocks on any rank
  // Blocks of fresh storage: mapped while waiting for messages, ahead of the refinement that
  // uses them, and mapped by refinement or migration when no spare storage was left.
  std::int64_t blocks_mapped_ahead = 0;
  std::int64_t blocks_mapped_on_take = 0;
  // The bytes a rank's entry takes in the partition's allgather after a migration.
  std::int64_t partition_bytes_per_rank = 0;
  // min / avg / max over ranks of each phase, seconds.
  comm::Spread total, compute, communicate, checksum, refine, load_balance, init;
  std::int64_t cell_var_updates = 0;  // all ranks
  double peak_rss_max = 0;            // bytes
  double field_bytes_max = 0;         // bytes of block storage at its peak, max over ranks
  // Seconds of emulated slowness (runtime::Slowdown::spent) per kind of work, max over ranks.
  double slowdown_stages_max = 0, slowdown_copies_max = 0, slowdown_adaptation_max = 0;
  double blocks_per_ts() const;
  double gflops() const;                   // stencil flops over the average compute time
  double stage_seconds_max = 0;            // ghosts + stencil + checksums, max over ranks
  double cell_var_updates_per_s() const;   // over stage_seconds_max
  double effective_bandwidth_gbs() const;  // 16 bytes (one read, one write) per update
};

// Collective: every rank calls it; the result is complete on rank 0.
Report gather_report(const Config& config, const Simulation& sim, runtime::Runtime& rt,
                     const Placement& placement = {});

// The end report; stdout gets the Summary line too, results.txt does not (as the reference).
void print_report(std::FILE* out, const Report& report, bool with_summary = true);
std::string summary_line(const Report& report);
// The results file's schema: raised when a key changes meaning or goes away.
constexpr int kResultsSchemaVersion = 1;

// The texts of results.yaml (or its JSON form, the same keys: tools/miniamr_results/
// results_keys.txt lists them) and results.txt (run.cpp writes them through write_on_root).
std::string results_yaml(const Report& report);
std::string results_json(const Report& report);
std::string results_txt(const Report& report);

}  // namespace miniamr::app
