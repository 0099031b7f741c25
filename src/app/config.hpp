// Every knob of a run, with the reference miniAMR's names, defaults and meanings
// (options.cpp fills it from a deck and the command line).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "stencil/block.hpp"

namespace miniamr::app {

// A moving, growing shape that drives refinement. `size` is the half-extent per direction.
struct Object {
  int type = 0;
  int bounce = 0;
  std::array<double, 3> center{0, 0, 0};
  std::array<double, 3> move{0, 0, 0};
  std::array<double, 3> size{0, 0, 0};
  std::array<double, 3> inc{0, 0, 0};
  friend bool operator==(const Object&, const Object&) = default;
};

enum class LbMethod { kRcb = 0, kMorton = 1, kHilbert = 2, kTruncHilbert = 3 };

// What a block weighs when the curve is cut into equal shares.
enum class LbWeight { kBlocks = 0, kModel = 1, kMeasured = 2 };

// What rank 0 prints while running: quiet (errors and the summary line), normal (a progress line
// per step, the block table when the mesh changed), verbose (the reference's detailed output).
enum class Verbosity { kQuiet, kNormal, kVerbose };

struct Config {
  // Block and root grid.
  int nx = 10, ny = 10, nz = 10;
  int init_x = 1, init_y = 1, init_z = 1;
  int npx = 1, npy = 1, npz = 1;
  int max_blocks = 0;  // 0 = no cap (the default); an explicit value caps blocks per rank
  bool max_blocks_given = false;

  // Refinement.
  int num_refine = 5;
  int block_change = 0;  // 0 = num_refine (resolved by effective_block_change())
  int uniform_refine = 0;
  int refine_freq = 5;  // 0 = refine only at timestep 0
  bool refine_ghost = false;

  // Load balance (ownership only; never changes the mesh).
  int inbalance = 0;
  int lb_opt = 1;
  LbMethod lb_method = LbMethod::kRcb;
  int reorder = -1;
  bool change_dir = false;
  int group_blocks = 0;  // 1 = --group_blocks, 2 = --break_ties
  int limit_move = 0;
  LbWeight lb_weight = LbWeight::kBlocks;

  // Data and stencil.
  int num_vars = 40;
  int comm_vars = 0;  // 0 or > num_vars = num_vars (effective_comm_vars())
  int stencil = 7;
  bool kokkos = false;       // stencils through the Kokkos back end (when built with it)
  std::string isa = "auto";  // instruction-set level of the native kernels, or auto
  int sweep_vars = 4;        // static, 7-point: variables per pass over the blocks
  int chunk_vars = 0;        // variables kept together for the cache (0 = automatic)
  int batch_tsteps = 5;      // timesteps whose stages run as one batch, at most
  int map_ahead = 0;         // 1: block storage for the next refinement mapped while waiting
  int error_tol = 8;
  bool report_diffusion = false;

  // Time loop.
  int num_tsteps = 20;
  bool num_tsteps_given = false;
  double time = 0.0;
  bool time_given = false;
  int stages_per_ts = 20;
  int checksum_freq = 5;

  // Communication variants of the reference.
  int code = 0;
  bool permute = false;
  bool blocking_send = false;
  bool send_faces = false;

  // Runtime: which mapper runs the stage graph, and on how many worker threads per rank.
  std::string runtime = "static";
  int threads = 0;  // 0: OMP_NUM_THREADS, else 1
  bool threads_given = false;
  int task_order_seed = 0;  // dynamic: non-zero runs ready tasks in a seeded random order

  // Computation: the kernels run (real), or only their calibrated cost is charged to the
  // simulated clock (model, simulation build): the mesh, messages and balancing still run.
  std::string compute = "real";
  std::string calibration_path;  // --compute model: seconds per cell-variable update

  // Start-up: the launcher starts every rank (mpirun), or one main process spawns `workers`
  // more (spawn), placed where the --plan file or plan server says.
  std::string launch = "mpirun";
  int workers = 0;
  bool workers_given = false;
  std::string plan;  // a plan file or a plan server's HOST:PORT ("" = the launcher's mapping)
  bool plan_strict = false;   // a plan server that fails stops the run instead of being ignored
  double plan_timeout = 5.0;  // seconds for the plan server's answer

  // The dynamic runtime's balancer: block ownership moves between ranks from measured costs.
  std::string lb = "predictive";  // none, diffusion, sfc, central, predictive
  bool lb_given = false;
  double lb_threshold = 1.10;      // balance when max/mean of the predicted rank times exceeds it
  int lb_freq = 5;                 // decide every lb_freq timesteps (a batch ends there)
  double lb_max_move = 1.0;        // central: the largest fraction of the blocks one decision moves
  std::string lb_log_path;         // one JSON line per decision ("" = none)
  std::string lb_replay_path;      // apply the moves of such a log instead of deciding
  std::string lb_link_model_path;  // a miniamr-netbench model instead of the start-up measurement

  // A heterogeneous or noisy machine, emulated: every task (or stage) of a slow rank takes
  // `factor` times as long; noise adds a seeded random delay per task.
  std::vector<std::string> slow_ranks;  // "R:F", validated by options.cpp
  double noise = 0.0;
  // The slow ranks as (rank, factor); valid after validation.
  std::vector<std::pair<int, double>> slow_rank_factors() const;

  // Resources: the most memory one rank may use, in bytes (0 = what the node has, shared by
  // its ranks).
  double max_memory = 0;

  // Checkpoints: every checkpoint_freq timesteps into checkpoint_dir, the newest
  // checkpoint_keep kept; restart_path continues from one (a file, or the newest in a folder).
  int checkpoint_freq = 0;
  std::string checkpoint_dir;
  int checkpoint_keep = 2;
  std::string restart_path;

  // Output.
  std::string trace_path;       // Chrome trace JSON ("" = none)
  std::string dump_graph_path;  // Graphviz DOT of the first timestep's graph ("" = none)
  int report_perf = 12;         // bit mask: 1 results.yaml, 2 results.txt, 4 end report, 8 progress
  Verbosity verbosity = Verbosity::kNormal;
  int progress_every = 1;          // timesteps between progress lines, at most
  double progress_interval = 1.0;  // seconds between progress lines, at least (the last: always)
  int plot_freq = 0;
  std::string plot_format = "text";  // text (the reference's plot.NNN), xdmf or vtkhdf (HDF5)
  std::string plot_vars;             // comma-separated variable indices of HDF5 plots ("" = 0)
  std::string plot_dir = ".";        // the folder plot files go to, created when missing
  // --plot_vars as indices; throws UsageError when one is malformed or not below num_vars.
  std::vector<int> plot_variables() const;

  std::vector<Object> objects;

  // Where the run came from (for the report); empty when no deck was given.
  std::string deck_path;
  std::vector<std::string> command_line;  // argv, for the results' provenance

  // The results file: --results PATH (always written), else results.yaml with --report_perf 1;
  // its format from --results_format, else from the name (.json), else YAML.
  std::string results_path;
  std::string results_format;
  bool results_wanted() const { return !results_path.empty() || (report_perf & 1); }
  std::string results_file() const { return results_path.empty() ? "results.yaml" : results_path; }
  bool results_json() const {
    return results_format == "json" ||
           (results_format.empty() && results_file().ends_with(".json"));
  }

  // --hilbert and --trunc_hilbert: ranks own ranges of a Hilbert curve instead of Morton.
  bool hilbert_ownership() const {
    return lb_method == LbMethod::kHilbert || lb_method == LbMethod::kTruncHilbert;
  }
  int effective_block_change() const { return block_change == 0 ? num_refine : block_change; }
  int effective_comm_vars() const {
    return (comm_vars <= 0 || comm_vars > num_vars) ? num_vars : comm_vars;
  }
  std::array<int, 3> root_blocks() const { return {npx * init_x, npy * init_y, npz * init_z}; }
  std::array<int, 3> block_cells() const { return {nx, ny, nz}; }
  stencil::BlockShape block_shape() const { return {nx, ny, nz, num_vars}; }
};

}  // namespace miniamr::app
