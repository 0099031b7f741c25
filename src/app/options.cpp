// Why a hand-written table and not CLI11: CLI11 can read most of these options (negative numbers
// as values, a 14-value repeated option, last-wins scalars), but the rules here are about the
// messages and the deck. Every error must be one sentence naming the option, or "deck.txt:LINE"
// and the key, and unknown names get an edit-distance suggestion; with CLI11 that means catching
// its exception types and re-parsing its message strings. Its config-file reader reports no line
// numbers, so decks would need a second path anyway, while the rule is that decks and argv go
// through one option table. And --object mixes integer and real values, which CLI11 would read as
// 14 doubles and leave to be re-checked by hand. A small table of (name, kind, setter) plus one
// loop for argv and one for deck lines states all of this directly in about the same code.

#include "app/options.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <system_error>
#include <variant>

#include <fmt/format.h>

#include "app/deck.hpp"
#include "app/errors.hpp"
#include "app/placement_plan.hpp"
#include "io/printable.hpp"
#include "octree/key.hpp"
#include "stencil/kernel_set.hpp"

namespace miniamr::app {
namespace {

using io::shown;

// What the setters write into: the Config plus the bookkeeping that only parsing needs.
struct State {
  Config config;
  std::optional<int> num_objects;  // --num_objects, when given
  bool num_objects_from_cli = false;
  bool cli_objects_seen = false;  // the first --object on the command line drops the deck's
  bool in_cli = false;
  bool quiet = false, verbose = false;
  // Where each option was first given, so a repeated one is an error rather than a silent
  // replacement: the deck line of each key, and the options seen on the command line.
  std::map<std::string, int, std::less<>> deck_lines;
  std::set<std::string, std::less<>> cli_seen;
};

// Options that add to a list and so may be given many times.
bool repeatable(std::string_view name) {
  return name == "object" || name == "slow_rank";
}

using IntSetter = void (*)(State&, int);
using RealSetter = void (*)(State&, double);
using FlagSetter = void (*)(State&, bool);  // false only comes from a deck ("permute = false")
using ObjectSetter = void (*)(State&, const Object&);
using TextSetter = void (*)(State&, const std::string&);
struct Bytes {
  double value;  // from "512M", "8G", "1.5T", "4096"
};
using SizeSetter = void (*)(State&, Bytes);
using Setter =
    std::variant<IntSetter, RealSetter, FlagSetter, ObjectSetter, TextSetter, SizeSetter>;

// The topics --help groups the options under, in its order.
enum class Group {
  kRun,
  kMesh,
  kObjects,
  kRuntime,
  kBalancer,
  kOutput,
  kLaunch,
  kCheckpoint,
  kSimulation,
  kCompatibility
};

struct OptionSpec {
  std::string_view name;  // without dashes; the deck key
  Setter set;
  std::string_view args;      // value names for the help text
  std::string_view fallback;  // default, for the help text: what happens without the option
  std::string_view meaning;   // one line, for the help text
  Group group;                // its topic in the help text
};

constexpr std::array<std::string_view, 14> kObjectFields{
    "type", "bounce", "cx", "cy", "cz", "mx", "my", "mz", "sx", "sy", "sz", "ix", "iy", "iz"};

std::size_t arity(const OptionSpec& spec) {
  if (std::holds_alternative<FlagSetter>(spec.set)) return 0;
  if (std::holds_alternative<ObjectSetter>(spec.set)) return kObjectFields.size();
  return 1;
}

// A selector flag set to false in a deck undoes only its own choice.
void set_lb(State& s, LbMethod m, bool on) {
  if (on) {
    s.config.lb_method = m;
  } else if (s.config.lb_method == m) {
    s.config.lb_method = LbMethod::kRcb;
  }
}
void set_group(State& s, int g, bool on) {
  if (on) {
    s.config.group_blocks = g;
  } else if (s.config.group_blocks == g) {
    s.config.group_blocks = 0;
  }
}

void add_object(State& s, const Object& o) {
  if (s.in_cli && !s.cli_objects_seen) {
    s.config.objects.clear();
    s.cli_objects_seen = true;
  }
  s.config.objects.push_back(o);
}

// The option table: every option of the reference, in the order of its help text.
// clang-format off
constexpr std::array kOptions{
  OptionSpec{"nx", IntSetter{[](State& s, int v) { s.config.nx = v; }}, "N", "10", "cells per block in x, even", Group::kMesh},
  OptionSpec{"ny", IntSetter{[](State& s, int v) { s.config.ny = v; }}, "N", "10", "cells per block in y, even", Group::kMesh},
  OptionSpec{"nz", IntSetter{[](State& s, int v) { s.config.nz = v; }}, "N", "10", "cells per block in z, even", Group::kMesh},
  OptionSpec{"init_x", IntSetter{[](State& s, int v) { s.config.init_x = v; }}, "N", "1", "root blocks in x per npx: the root grid is npx*init_x blocks in x", Group::kMesh},
  OptionSpec{"init_y", IntSetter{[](State& s, int v) { s.config.init_y = v; }}, "N", "1", "root blocks in y per npy", Group::kMesh},
  OptionSpec{"init_z", IntSetter{[](State& s, int v) { s.config.init_z = v; }}, "N", "1", "root blocks in z per npz", Group::kMesh},
  OptionSpec{"npx", IntSetter{[](State& s, int v) { s.config.npx = v; }}, "N", "1", "the reference's ranks in x: here a factor of the root grid (npx*init_x blocks in x); any number of ranks runs it", Group::kMesh},
  OptionSpec{"npy", IntSetter{[](State& s, int v) { s.config.npy = v; }}, "N", "1", "as --npx, in y", Group::kMesh},
  OptionSpec{"npz", IntSetter{[](State& s, int v) { s.config.npz = v; }}, "N", "1", "as --npx, in z", Group::kMesh},
  OptionSpec{"max_blocks", IntSetter{[](State& s, int v) { s.config.max_blocks = v; s.config.max_blocks_given = true; }}, "N", "no cap", "most blocks one rank may hold", Group::kMesh},
  OptionSpec{"num_refine", IntSetter{[](State& s, int v) { s.config.num_refine = v; }}, "R", "5", "deepest level, 0..20 (0 = no refinement)", Group::kMesh},
  OptionSpec{"block_change", IntSetter{[](State& s, int v) { s.config.block_change = v; }}, "N", "num_refine", "refinement iterations per step after timestep 0", Group::kMesh},
  OptionSpec{"uniform_refine", IntSetter{[](State& s, int v) { s.config.uniform_refine = v; }}, "N", "0", "non-zero: refine all to num_refine at timestep 0 only", Group::kMesh},
  OptionSpec{"refine_freq", IntSetter{[](State& s, int v) { s.config.refine_freq = v; }}, "N", "5", "refine every N timesteps (0 = only at timestep 0)", Group::kMesh},
  OptionSpec{"inbalance", IntSetter{[](State& s, int v) { s.config.inbalance = v; }}, "P", "0", "static runtime: re-cut the curve when the ranks' blocks differ by more than P%", Group::kBalancer},
  OptionSpec{"lb_opt", IntSetter{[](State& s, int v) { s.config.lb_opt = v; }}, "N", "1", "static runtime: re-cut the curve 0 never, 1 at each refinement step, 2 after every refinement iteration", Group::kBalancer},
  OptionSpec{"lb_weight", IntSetter{[](State& s, int v) { s.config.lb_weight = static_cast<LbWeight>(v); }}, "W", "0", "static runtime: what a block weighs in the cut: 0 one per block, 1 a cost model, 2 its measured time", Group::kBalancer},
  OptionSpec{"num_vars", IntSetter{[](State& s, int v) { s.config.num_vars = v; }}, "N", "40", "variables per cell", Group::kRun},
  OptionSpec{"comm_vars", IntSetter{[](State& s, int v) { s.config.comm_vars = v; }}, "N", "num_vars", "variables per ghost-exchange group (0 = all)", Group::kRun},
  OptionSpec{"num_tsteps", IntSetter{[](State& s, int v) { s.config.num_tsteps = v; s.config.num_tsteps_given = true; }}, "N", "20", "number of timesteps", Group::kRun},
  OptionSpec{"time", RealSetter{[](State& s, double v) { s.config.time = v; s.config.time_given = true; }}, "T", "none: --num_tsteps timesteps", "run to simulated time T (automatic time step)", Group::kRun},
  OptionSpec{"stages_per_ts", IntSetter{[](State& s, int v) { s.config.stages_per_ts = v; }}, "N", "20", "stencil stages per timestep", Group::kRun},
  OptionSpec{"checksum_freq", IntSetter{[](State& s, int v) { s.config.checksum_freq = v; }}, "N", "5", "checksum every N stages (0 = never)", Group::kRun},
  OptionSpec{"stencil", IntSetter{[](State& s, int v) { s.config.stencil = v; }}, "S", "7", "7 or 27 point, 0 = variable work (num_vars >= 8)", Group::kRun},
  OptionSpec{"error_tol", IntSetter{[](State& s, int v) { s.config.error_tol = v; }}, "E", "8", "checksum relative tolerance is 10^-E", Group::kRun},
  OptionSpec{"report_diffusion", FlagSetter{[](State& s, bool on) { s.config.report_diffusion = on; }}, "", "off", "print every checksum", Group::kOutput},
  OptionSpec{"report_perf", IntSetter{[](State& s, int v) { s.config.report_perf = v; }}, "M", "12", "bits: 1 results.yaml, 2 results.txt, 4 report, 8 progress", Group::kOutput},
  OptionSpec{"results", TextSetter{[](State& s, const std::string& v) { s.config.results_path = v; }}, "FILE", "results.yaml with --report_perf 1", "write the results file here (always)", Group::kOutput},
  OptionSpec{"results_format", TextSetter{[](State& s, const std::string& v) { s.config.results_format = v; }}, "yaml|json", "from the file name", "format of the results file", Group::kOutput},
  OptionSpec{"quiet", FlagSetter{[](State& s, bool on) { s.quiet = on; }}, "", "off", "print only errors and the summary line", Group::kOutput},
  OptionSpec{"verbose", FlagSetter{[](State& s, bool on) { s.verbose = on; }}, "", "off", "print the reference's detailed output (every block table, timestep, balance)", Group::kOutput},
  OptionSpec{"progress_every", IntSetter{[](State& s, int v) { s.config.progress_every = v; }}, "N", "1", "a progress line every N timesteps", Group::kOutput},
  OptionSpec{"progress_interval", RealSetter{[](State& s, double v) { s.config.progress_interval = v; }}, "S", "1", "at least S seconds between progress lines (0: every line --progress_every picks); the last timestep's line always", Group::kOutput},
  OptionSpec{"plot_freq", IntSetter{[](State& s, int v) { s.config.plot_freq = v; }}, "N", "0", "plot at timestep 0 and every N timesteps (0 = never)", Group::kOutput},
  OptionSpec{"plot_format", TextSetter{[](State& s, const std::string& v) { s.config.plot_format = v; }}, "text|xdmf|vtkhdf", "text", "plot files: the reference's text (block levels and centres), XDMF + HDF5 (blocks and cells), or VTKHDF (cells; VTK's own HDF5 format), each with a time-series index for ParaView", Group::kOutput},
  OptionSpec{"plot_vars", TextSetter{[](State& s, const std::string& v) { s.config.plot_vars = v; }}, "LIST", "0", "xdmf and vtkhdf plots: comma-separated variables whose cell values (and xdmf: block means) are written", Group::kOutput},
  OptionSpec{"plot_dir", TextSetter{[](State& s, const std::string& v) { s.config.plot_dir = v; }}, "DIR", ".", "the folder for plot files (created when missing)", Group::kOutput},
  OptionSpec{"code", IntSetter{[](State& s, int v) { s.config.code = v; }}, "N", "0", "the reference's message layout (0-2); here ghost messages always carry exactly the faces read", Group::kCompatibility},
  OptionSpec{"permute", FlagSetter{[](State& s, bool on) { s.config.permute = on; }}, "", "off", "the reference's random order of exchange directions; here the order is fixed", Group::kCompatibility},
  OptionSpec{"kokkos", FlagSetter{[](State& s, bool on) { s.config.kokkos = on; }}, "", "off", "run the 7- and 27-point stencils with the Kokkos back end", Group::kRuntime},
  OptionSpec{"isa", TextSetter{[](State& s, const std::string& v) { s.config.isa = v; }}, "LEVEL", "auto", "native kernels for x86-64, x86-64-v3 (AVX2) or x86-64-v4 (AVX-512); auto: the widest this machine runs", Group::kRuntime},
  OptionSpec{"sweep_vars", IntSetter{[](State& s, int v) { s.config.sweep_vars = v; }}, "N", "4", "static runtime, 7-point stencil: variables filled and swept per pass over the blocks (at most a comm group)", Group::kRuntime},
  OptionSpec{"chunk_vars", IntSetter{[](State& s, int v) { s.config.chunk_vars = v; }}, "N", "0", "variables kept together for the cache: the static runtime takes each chunk through every stage of a batch (--batch_tsteps), the dynamic one gives each its own task graph (0 = as many as fit 1 MiB per thread on the fullest rank, at least two, whole comm groups once one fits; num_vars = stage by stage)", Group::kRuntime},
  OptionSpec{"batch_tsteps", IntSetter{[](State& s, int v) { s.config.batch_tsteps = v; }}, "N", "5", "timesteps whose stages run as one batch, the static runtime taking each cache chunk of variables through all of them (a refinement, plot, checkpoint or balancing step ends a batch; 1 = timestep by timestep)", Group::kRuntime},
  OptionSpec{"map_ahead", IntSetter{[](State& s, int v) { s.config.map_ahead = v; }}, "0|1", "0", "1: while waiting for messages, map the block storage the next refinement step is expected to need (as much as the pool lent since the step before, at most), in small pages; 0: map it when the step makes the blocks, in huge pages", Group::kRuntime},
  OptionSpec{"blocking_send", FlagSetter{[](State& s, bool on) { s.config.blocking_send = on; }}, "", "off", "blocking sends instead of non-blocking ones", Group::kRuntime},
  OptionSpec{"refine_ghost", FlagSetter{[](State& s, bool on) { s.config.refine_ghost = on; }}, "", "off", "objects also refine blocks whose ghost cells they reach", Group::kMesh},
  OptionSpec{"refine_ghosts", FlagSetter{[](State& s, bool on) { s.config.refine_ghost = on; }}, "", "off", "alias of --refine_ghost (the reference README's spelling)", Group::kMesh},
  OptionSpec{"change_dir", FlagSetter{[](State& s, bool on) { s.config.change_dir = on; }}, "", "off", "an RCB option of the reference; here ownership is a cut of the curve", Group::kCompatibility},
  OptionSpec{"group_blocks", FlagSetter{[](State& s, bool on) { set_group(s, 1, on); }}, "", "off", "an RCB option of the reference; no effect on the curve cut", Group::kCompatibility},
  OptionSpec{"break_ties", FlagSetter{[](State& s, bool on) { set_group(s, 2, on); }}, "", "off", "an RCB option of the reference; no effect on the curve cut", Group::kCompatibility},
  OptionSpec{"limit_move", IntSetter{[](State& s, int v) { s.config.limit_move = v; }}, "P", "0", "the reference's cap on the blocks a rebalance moves; here a rebalance reaches the even cut", Group::kCompatibility},
  OptionSpec{"send_faces", FlagSetter{[](State& s, bool on) { s.config.send_faces = on; }}, "", "off", "the reference's message per face; here faces go in one message per partner rank", Group::kCompatibility},
  OptionSpec{"rcb", FlagSetter{[](State& s, bool on) { set_lb(s, LbMethod::kRcb, on); }}, "", "the curve cut", "the reference's recursive coordinate bisection: not implemented; ownership stays the weighted cut of the curve (--morton, --hilbert)", Group::kCompatibility},
  OptionSpec{"morton", FlagSetter{[](State& s, bool on) { set_lb(s, LbMethod::kMorton, on); }}, "", "on", "ranks own ranges of the Morton curve (the default)", Group::kBalancer},
  OptionSpec{"hilbert", FlagSetter{[](State& s, bool on) { set_lb(s, LbMethod::kHilbert, on); }}, "", "off: Morton", "ranks own ranges of a Hilbert curve instead of Morton's", Group::kBalancer},
  OptionSpec{"trunc_hilbert", FlagSetter{[](State& s, bool on) { set_lb(s, LbMethod::kTruncHilbert, on); }}, "", "off: Morton", "the same Hilbert curve as --hilbert (the reference's truncated Hilbert order)", Group::kBalancer},
  OptionSpec{"reorder", IntSetter{[](State& s, int v) { s.config.reorder = v; }}, "N", "-1", "the reference's reordering of ranks; here ranks follow the curve", Group::kCompatibility},
  OptionSpec{"runtime", TextSetter{[](State& s, const std::string& v) { s.config.runtime = v; }}, "NAME", "static", "static (MPI ranks, bulk-synchronous stages) or dynamic (tasks on futures)", Group::kRuntime},
  OptionSpec{"threads", IntSetter{[](State& s, int v) { s.config.threads = v; s.config.threads_given = true; }}, "N", "OMP_NUM_THREADS or 1", "worker threads per rank", Group::kRuntime},
  OptionSpec{"task_order_seed", IntSetter{[](State& s, int v) { s.config.task_order_seed = v; }}, "SEED", "0", "dynamic: run ready tasks in a random order from SEED (testing; 0 = off)", Group::kRuntime},
  OptionSpec{"launch", TextSetter{[](State& s, const std::string& v) { s.config.launch = v; }}, "HOW", "mpirun", "mpirun: the launcher starts every rank; spawn: this one process spawns --workers more", Group::kLaunch},
  OptionSpec{"workers", IntSetter{[](State& s, int v) { s.config.workers = v; s.config.workers_given = true; }}, "N", "none", "--launch spawn: worker processes to spawn (the run has N+1 ranks)", Group::kLaunch},
  OptionSpec{"plan", TextSetter{[](State& s, const std::string& v) { s.config.plan = v; }}, "FILE|HOST:PORT", "none", "--launch spawn: the workers' hosts from a plan file or a plan server", Group::kLaunch},
  OptionSpec{"plan_strict", FlagSetter{[](State& s, bool on) { s.config.plan_strict = on; }}, "", "off", "stop when the plan server fails, instead of using the launcher's mapping", Group::kLaunch},
  OptionSpec{"plan_timeout", RealSetter{[](State& s, double v) { s.config.plan_timeout = v; }}, "S", "5", "seconds to wait for the plan server's answer", Group::kLaunch},
  OptionSpec{"lb", TextSetter{[](State& s, const std::string& v) { s.config.lb = v; s.config.lb_given = true; }}, "NAME", "predictive", "dynamic balancer: none, diffusion, sfc, central, predictive", Group::kBalancer},
  OptionSpec{"lb_threshold", RealSetter{[](State& s, double v) { s.config.lb_threshold = v; }}, "X", "1.10", "balance when max/mean predicted rank time exceeds X (>= 1)", Group::kBalancer},
  OptionSpec{"lb_freq", IntSetter{[](State& s, int v) { s.config.lb_freq = v; }}, "N", "5", "dynamic balancer: decide every N timesteps between refinement steps, not just before one (a batch of timesteps ends there)", Group::kBalancer},
  OptionSpec{"lb_max_move", RealSetter{[](State& s, double v) { s.config.lb_max_move = v; }}, "F", "1", "central: move at most this fraction of the blocks (0 < F <= 1)", Group::kBalancer},
  OptionSpec{"lb_log", TextSetter{[](State& s, const std::string& v) { s.config.lb_log_path = v; }}, "FILE", "none", "write one JSON line per balancing decision", Group::kBalancer},
  OptionSpec{"lb_replay", TextSetter{[](State& s, const std::string& v) { s.config.lb_replay_path = v; }}, "FILE", "none", "apply the moves of an --lb_log file instead of deciding", Group::kBalancer},
  OptionSpec{"lb_link_model", TextSetter{[](State& s, const std::string& v) { s.config.lb_link_model_path = v; }}, "FILE", "measured at start-up", "migration cost from a miniamr-netbench model file", Group::kBalancer},
  OptionSpec{"slow_rank", TextSetter{[](State& s, const std::string& v) { s.config.slow_ranks.push_back(v); }}, "R[-R2]:F", "none", "rank R (or ranks R to R2) computes F times slower (busy-waits; repeatable)", Group::kRuntime},
  OptionSpec{"noise", RealSetter{[](State& s, double v) { s.config.noise = v; }}, "SIGMA", "0", "seeded random extra delay per task, |N(0,SIGMA)| of its time", Group::kRuntime},
  OptionSpec{"compute", TextSetter{[](State& s, const std::string& v) { s.config.compute = v; }}, "MODE", "real", "real: run the stencil kernels; model (simulation build): charge their calibrated cost instead", Group::kSimulation},
  OptionSpec{"calibration", TextSetter{[](State& s, const std::string& v) { s.config.calibration_path = v; }}, "FILE", "none", "--compute model: seconds per cell-variable update per kernel (tools/calibrate_compute.py)", Group::kSimulation},
  OptionSpec{"max_memory", SizeSetter{[](State& s, Bytes v) { s.config.max_memory = v.value; }}, "SIZE", "the node's available memory / its ranks", "memory one rank may use (e.g. 512M, 8G); bigger meshes are refused", Group::kRun},
  OptionSpec{"checkpoint_freq", IntSetter{[](State& s, int v) { s.config.checkpoint_freq = v; }}, "N", "0", "write a checkpoint every N timesteps (0 = never)", Group::kCheckpoint},
  OptionSpec{"checkpoint_dir", TextSetter{[](State& s, const std::string& v) { s.config.checkpoint_dir = v; }}, "DIR", "none", "folder of the checkpoints (created if missing)", Group::kCheckpoint},
  OptionSpec{"checkpoint_keep", IntSetter{[](State& s, int v) { s.config.checkpoint_keep = v; }}, "K", "2", "keep the newest K checkpoints", Group::kCheckpoint},
  OptionSpec{"restart", TextSetter{[](State& s, const std::string& v) { s.config.restart_path = v; }}, "DIR|FILE", "none", "continue from a checkpoint (the newest in DIR), on any rank count", Group::kCheckpoint},
  OptionSpec{"trace", TextSetter{[](State& s, const std::string& v) { s.config.trace_path = v; }}, "FILE", "none", "write a Chrome trace (JSON, Perfetto) of every task and message", Group::kOutput},
  OptionSpec{"dump_graph", TextSetter{[](State& s, const std::string& v) { s.config.dump_graph_path = v; }}, "FILE", "none", "write the task graph of the first timestep as Graphviz DOT", Group::kOutput},
  OptionSpec{"num_objects", IntSetter{[](State& s, int v) { s.num_objects = v; s.num_objects_from_cli = s.in_cli; }}, "N", "the --object options given", "number of --object options (optional, checked)", Group::kObjects},
  OptionSpec{"object", ObjectSetter{add_object}, "type bounce cx cy cz mx my mz sx sy sz ix iy iz", "none", "add a refinement object (repeatable)", Group::kObjects},
};
// clang-format on

// Where a group of values came from, for messages: the command line or a deck line.
struct Where {
  std::string prefix;  // "" or "deck.txt:3: "
  bool deck = false;
  std::string label(std::string_view name) const {
    return deck ? fmt::format("'{}'", name) : fmt::format("--{}", name);
  }
};

// ---- Values ------------------------------------------------------------------------------------

int to_int(std::string_view text, std::string_view what, const Where& where) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits.front() == '+' && digits[1] != '-') digits.remove_prefix(1);
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) {
    throw UsageError(fmt::format("{}{} value {} is out of range", where.prefix, what, shown(text)));
  }
  if (ec != std::errc{} || end != digits.data() + digits.size()) {
    throw UsageError(
        fmt::format("{}{} expects an integer, got {}", where.prefix, what, shown(text)));
  }
  return value;
}

double to_real(std::string_view text, std::string_view what, const Where& where) {
  std::string_view digits = text;
  if (digits.size() > 1 && digits.front() == '+' && digits[1] != '-') digits.remove_prefix(1);
  double value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec == std::errc::result_out_of_range) {
    throw UsageError(fmt::format("{}{} value {} is out of range", where.prefix, what, shown(text)));
  }
  if (ec != std::errc{} || end != digits.data() + digits.size() || !std::isfinite(value)) {
    throw UsageError(fmt::format("{}{} expects a number, got {}", where.prefix, what, shown(text)));
  }
  return value;
}

// The largest size option: 2^60 bytes (1 EiB), far beyond any machine, far below 2^63.
constexpr double kMaxSizeBytes = 0x1p60;

// A byte count with an optional binary suffix: "4096", "512K", "512M", "1.5G", "2T".
double to_size(std::string_view text, std::string_view what, const Where& where) {
  static constexpr std::string_view kSuffixes = "KMGT";
  double scale = 1;
  std::string_view number = text;
  if (!number.empty()) {
    const char last = char(std::toupper(static_cast<unsigned char>(number.back())));
    if (const auto at = kSuffixes.find(last); at != std::string_view::npos) {
      scale = std::pow(1024.0, double(at + 1));
      number.remove_suffix(1);
    }
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc{} || end != number.data() + number.size() || !(value > 0) ||
      !std::isfinite(value * scale))
    throw UsageError(fmt::format("{}{} expects a positive size such as 512M or 8G, got {}",
                                 where.prefix, what, shown(text)));
  // Sizes are byte counts in 64-bit integers further on: anything near 2^64 would wrap.
  if (value * scale > kMaxSizeBytes)
    throw UsageError(fmt::format("{}{} must be at most 1048576T (1 EiB), got {}", where.prefix,
                                 what, shown(text)));
  return value * scale;
}

bool to_bool(std::string_view text, std::string_view what, const Where& where) {
  if (text == "true") return true;
  if (text == "false") return false;
  throw UsageError(
      fmt::format("{}{} expects true or false, got {}", where.prefix, what, shown(text)));
}

Object to_object(std::span<const std::string> v, const Where& where) {
  const auto field = [&](std::size_t i) {
    return fmt::format("{} {}", where.label("object"), kObjectFields[i]);
  };
  const auto real = [&](std::size_t i) { return to_real(v[i], field(i), where); };
  Object o;
  o.type = to_int(v[0], field(0), where);
  o.bounce = to_int(v[1], field(1), where);
  for (std::size_t d = 0; d < 3; ++d) {
    o.center[d] = real(2 + d);
    o.move[d] = real(5 + d);
    o.size[d] = real(8 + d);
    o.inc[d] = real(11 + d);
  }
  return o;
}

// Converts the values (already the right number of them) and calls the option's setter.
void apply(State& state, const OptionSpec& spec, std::span<const std::string> values,
           const Where& where) {
  const std::string what = where.label(spec.name);
  if (const auto* set = std::get_if<IntSetter>(&spec.set)) {
    (*set)(state, to_int(values[0], what, where));
  } else if (const auto* set_real = std::get_if<RealSetter>(&spec.set)) {
    (*set_real)(state, to_real(values[0], what, where));
  } else if (const auto* set_flag = std::get_if<FlagSetter>(&spec.set)) {
    (*set_flag)(state, values.empty() || to_bool(values[0], what, where));
  } else if (const auto* set_size = std::get_if<SizeSetter>(&spec.set)) {
    (*set_size)(state, Bytes{to_size(values[0], what, where)});
  } else if (const auto* set_text = std::get_if<TextSetter>(&spec.set)) {
    if (values[0].empty())
      throw UsageError(fmt::format("{}{} expects a value, got ''", where.prefix, what));
    (*set_text)(state, values[0]);
  } else {
    std::get<ObjectSetter>(spec.set)(state, to_object(values, where));
  }
}

std::string expected_values(const OptionSpec& spec) {
  if (std::holds_alternative<IntSetter>(spec.set)) return "an integer";
  if (std::holds_alternative<RealSetter>(spec.set)) return "a number";
  if (std::holds_alternative<FlagSetter>(spec.set)) return "true or false";
  if (std::holds_alternative<SizeSetter>(spec.set)) return "a size such as 512M or 8G";
  if (std::holds_alternative<TextSetter>(spec.set)) {
    if (spec.args == "FILE") return "a file name";
    if (spec.args == "DIR") return "a folder";
    if (spec.args == "FILE|HOST:PORT") return "a plan file or HOST:PORT";
    if (spec.args == "DIR|FILE") return "a folder or a file";
    return spec.args.find('|') != std::string_view::npos ? fmt::format("one of {}", spec.args)
                                                         : std::string("a name");
  }
  return fmt::format("{} values ({})", kObjectFields.size(), spec.args);
}

[[noreturn]] void throw_missing(const OptionSpec& spec, std::size_t got, const Where& where) {
  const bool many = arity(spec) > 1;
  throw UsageError(fmt::format("{}missing value{} for {}: expects {}{}", where.prefix,
                               many ? "s" : "", where.label(spec.name), expected_values(spec),
                               many ? fmt::format(", got {}", got) : std::string()));
}

// ---- Names -------------------------------------------------------------------------------------

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

const OptionSpec* find_option(std::string_view name) {
  const auto it = std::ranges::find(kOptions, name, &OptionSpec::name);
  return it == kOptions.end() ? nullptr : &*it;
}

// The closest option name, if it is close enough to be a likely typo.
std::optional<std::string_view> nearest_name(std::string_view name) {
  const OptionSpec* best = nullptr;
  std::size_t best_distance = 0;
  for (const OptionSpec& spec : kOptions) {
    const std::size_t d = edit_distance(name, spec.name);
    if (best == nullptr || d < best_distance) {
      best = &spec;
      best_distance = d;
    }
  }
  const std::size_t limit = std::max<std::size_t>(2, name.size() / 3);
  if (best == nullptr || best_distance > limit) return std::nullopt;
  return best->name;
}

[[noreturn]] void throw_unknown(std::string_view written, std::string_view bare,
                                const Where& where) {
  const std::string_view kind = where.deck ? "key" : "option";
  const auto near = nearest_name(bare);
  const std::string_view dashes = where.deck ? "" : "--";
  const std::string hint =
      near ? fmt::format(" (did you mean '{}{}'?)", dashes, *near) : std::string();
  throw UsageError(fmt::format("{}unknown {} {}{}", where.prefix, kind, shown(written), hint));
}

// "--nx" -> "nx"; all dashes -> "".
std::string_view strip_dashes(std::string_view word) {
  const auto first = word.find_first_not_of('-');
  return first == std::string_view::npos ? std::string_view{} : word.substr(first);
}

// ---- Command line ------------------------------------------------------------------------------

bool is_option_word(std::string_view word) {
  if (word.starts_with("--")) return true;
  // "-nx" is a mistyped option; "-5" or "-0.01" is a (stray) number.
  return word.size() > 1 && word[0] == '-' && std::isalpha(static_cast<unsigned char>(word[1]));
}

const OptionSpec& lookup_cli(std::string_view word, const Where& where) {
  const std::string_view bare = strip_dashes(word);
  if (word.starts_with("--")) {
    if (const OptionSpec* spec = find_option(bare)) return *spec;
  }
  throw_unknown(word, bare, where);
}

[[noreturn]] void throw_stray(std::span<const std::string> args, std::size_t i) {
  std::string after;
  if (i > 0 && is_option_word(args[i - 1])) {
    const OptionSpec* prev = find_option(std::string_view(args[i - 1]).substr(2));
    if (prev != nullptr && arity(*prev) == 0) {
      after = fmt::format(" after --{0} (--{0} takes no value)", prev->name);
    }
  }
  if (after.empty()) after = " (options start with '--'; a deck path may only come first)";
  throw UsageError(fmt::format("unexpected argument {}{}", shown(args[i]), after));
}

void apply_cli(State& state, std::span<const std::string> args) {
  const Where where{"", false};
  state.in_cli = true;
  std::size_t i = 0;
  while (i < args.size()) {
    if (!is_option_word(args[i])) throw_stray(args, i);
    // "--nx=16", as GNU tools take it, is "--nx 16".
    std::string_view word = args[i];
    std::optional<std::string> joined;
    if (const auto eq = word.find('='); word.starts_with("--") && eq != std::string_view::npos &&
                                        find_option(word.substr(2, eq - 2))) {
      joined = std::string(word.substr(eq + 1));
      word = word.substr(0, eq);
    }
    const OptionSpec& spec = lookup_cli(word, where);
    if (!repeatable(spec.name) && !state.cli_seen.emplace(spec.name).second)
      throw UsageError(fmt::format(
          "--{} is given twice on the command line; give it once (the command line may override "
          "a deck's value, not its own)",
          spec.name));
    const std::size_t n = arity(spec);
    if (joined) {
      if (n > 1)
        throw UsageError(
            fmt::format("--{} takes {} values: give them as separate words", spec.name, n));
      apply(state, spec, std::span(&*joined, 1), where);  // a flag takes =true or =false
      ++i;
      continue;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      // mpirun takes a lone ':' as the end of this program's words (MPMD): say so when the value
      // is missing at the very end, where that ':' would have been.
      if (i + k >= args.size() && n == 1 && std::holds_alternative<TextSetter>(spec.set))
        throw UsageError(fmt::format(
            "missing value for --{}: expects {} (under mpirun a lone ':' ends the program's "
            "words: write --{}=VALUE)",
            spec.name, expected_values(spec), spec.name));
      // A value never starts with "--": "--nx --ny 4" is a missing value, not "--ny" read as 0.
      if (i + k >= args.size() || args[i + k].starts_with("--")) throw_missing(spec, k - 1, where);
    }
    apply(state, spec, args.subspan(i + 1, n), where);
    i += 1 + n;
  }
  if (state.cli_objects_seen && state.num_objects && !state.num_objects_from_cli) {
    state.num_objects.reset();  // the deck's count described the deck's objects, now replaced
  }
}

// ---- Deck --------------------------------------------------------------------------------------

void apply_entry(State& state, const DeckEntry& entry, const Where& where) {
  if (entry.key.starts_with('-')) {
    const std::string_view bare = strip_dashes(entry.key);
    if (find_option(bare) != nullptr) {
      throw UsageError(fmt::format("{}write deck keys without dashes: '{}', not {}", where.prefix,
                                   bare, shown(entry.key)));
    }
  }
  const OptionSpec* spec = find_option(entry.key);
  if (spec == nullptr) throw_unknown(entry.key, entry.key, where);
  if (!repeatable(spec->name)) {
    const auto [first, fresh] = state.deck_lines.emplace(spec->name, entry.line);
    if (!fresh)
      throw UsageError(fmt::format("{}'{}' is given twice in the deck (first on line {})",
                                   where.prefix, spec->name, first->second));
  }
  // A flag is written "permute = true" in a deck, so it takes one value there.
  const std::size_t n = std::max<std::size_t>(arity(*spec), 1);
  if (entry.values.size() < n) throw_missing(*spec, entry.values.size(), where);
  if (entry.values.size() > n) {
    throw UsageError(fmt::format("{}too many values for '{}': expects {}, got {}", where.prefix,
                                 spec->name, n, entry.values.size()));
  }
  apply(state, *spec, entry.values, where);
}

void apply_deck(State& state, const Deck& deck) {
  for (const DeckEntry& entry : deck.entries) {
    apply_entry(state, entry,
                Where{fmt::format("{}:{}: ", io::printable(deck.name), entry.line), true});
  }
}

// ---- Validation --------------------------------------------------------------------------------

[[noreturn]] void fail(const std::string& message) {
  throw UsageError(message);
}

// Bounds of the options that multiply a run's time or work (the cores of a node bound --threads
// further at start-up, app/run.cpp).
constexpr int kMaxThreads = 4096;
constexpr double kMaxSlowdown = 1000;
constexpr double kMaxNoise = 10;
// A --slow_rank range spans at most this many ranks (more than any MPI job has).
constexpr std::int64_t kMaxSlowRanks = std::int64_t{1} << 24;

void check_object_count(const State& state) {
  if (!state.num_objects) return;
  const int wanted = *state.num_objects;
  if (wanted < 0) fail(fmt::format("--num_objects must be non-negative, got {}", wanted));
  const auto given = static_cast<std::int64_t>(state.config.objects.size());
  if (given < wanted) {
    fail(fmt::format("fewer --object than --num_objects: {} given, {} expected", given, wanted));
  }
  if (given > wanted) {
    fail(fmt::format("more --object than --num_objects: {} given, {} expected", given, wanted));
  }
}

void check_at_least(std::string_view name, int value, int low) {
  if (value < low) fail(fmt::format("--{} must be at least {}, got {}", name, low, value));
}

void check_range(std::string_view name, int value, int low, int high) {
  if (value < low || value > high) {
    fail(fmt::format("--{} must be between {} and {}, got {}", name, low, high, value));
  }
}

// Every index into a block, and every count of its values (MPI counts are ints), must fit an
// int: a block holds at most 2^31 - 1 values, ghosts included.
constexpr int kMaxBlockCells = 1 << 16;

void check_block_size(const Config& c) {
  const std::array<std::pair<std::string_view, int>, 3> sizes{
      {{"nx", c.nx}, {"ny", c.ny}, {"nz", c.nz}}};
  for (const auto& [name, n] : sizes) {
    if (n < 1 || n % 2 != 0) {
      fail(fmt::format("--{} must be a positive even number of cells, got {}", name, n));
    }
    if (n > kMaxBlockCells)
      fail(fmt::format("--{} must be at most {} cells, got {}", name, kMaxBlockCells, n));
  }
  if (c.num_vars < 1) return;  // check_work names that
  // In double: the product of four ints can pass even 2^63.
  const double values = double(c.nx + 2) * (c.ny + 2) * (c.nz + 2) * c.num_vars;
  if (values > std::numeric_limits<int>::max())
    fail(fmt::format(
        "a block of {}x{}x{} cells x {} variables holds {:.0f} values with its ghosts; at most {} "
        "are supported (smaller blocks or fewer --num_vars)",
        c.nx, c.ny, c.nz, c.num_vars, values, std::numeric_limits<int>::max()));
}

void check_grid(const Config& c) {
  check_at_least("init_x", c.init_x, 1);
  check_at_least("init_y", c.init_y, 1);
  check_at_least("init_z", c.init_z, 1);
  check_at_least("npx", c.npx, 1);
  check_at_least("npy", c.npy, 1);
  check_at_least("npz", c.npz, 1);
  const std::array<std::array<int, 2>, 3> factors{
      {{c.npx, c.init_x}, {c.npy, c.init_y}, {c.npz, c.init_z}}};
  for (std::size_t d = 0; d < 3; ++d) {
    const std::int64_t n = std::int64_t{factors[d][0]} * factors[d][1];
    if (n > octree::kMaxRootBlocks) {
      const char axis = static_cast<char>('x' + d);
      fail(fmt::format(
          "root grid too large in {0}: np{0}*init_{0} = {1}*{2} = {3} root blocks, but the 32-bit "
          "block keys hold at most {4} per direction",
          axis, factors[d][0], factors[d][1], n, octree::kMaxRootBlocks));
    }
  }
  if (c.max_blocks_given) {
    check_at_least("max_blocks", c.max_blocks, 1);
    const std::int64_t initial = std::int64_t{c.init_x} * c.init_y * c.init_z;
    if (c.max_blocks < initial) {
      fail(fmt::format(
          "--max_blocks {} is smaller than the initial blocks per rank (init_x*init_y*init_z = {})",
          c.max_blocks, initial));
    }
  }
}

void check_refinement(const Config& c) {
  if (c.num_refine < 0 || c.num_refine > octree::kMaxLevel) {
    fail(fmt::format(
        "--num_refine must be between 0 and {} (the deepest level the 32-bit block keys can "
        "name), got {}",
        octree::kMaxLevel, c.num_refine));
  }
  check_at_least("block_change", c.block_change, 0);
  check_at_least("refine_freq", c.refine_freq, 0);
}

void check_work(const Config& c) {
  check_at_least("num_vars", c.num_vars, 1);
  check_at_least("comm_vars", c.comm_vars, 0);
  if (c.stencil != 0 && c.stencil != 7 && c.stencil != 27) {
    fail(fmt::format("--stencil must be 0, 7 or 27, got {}", c.stencil));
  }
  if (c.stencil == 0 && c.num_vars < 8) {
    fail(fmt::format("--stencil 0 needs --num_vars of at least 8, got {}", c.num_vars));
  }
  check_range("code", c.code, 0, 2);
  check_range("lb_opt", c.lb_opt, 0, 2);
  check_range("lb_weight", static_cast<int>(c.lb_weight), 0, 2);
  check_at_least("inbalance", c.inbalance, 0);
  check_range("limit_move", c.limit_move, 0, 100);
  if (c.reorder < -1 || c.reorder > 1) {
    fail(fmt::format("--reorder must be -1, 0 or 1, got {}", c.reorder));
  }
}

void check_runtime(const Config& c) {
  if (c.isa != "auto" && !stencil::parse_isa(c.isa))
    fail(fmt::format("--isa must be auto, x86-64, x86-64-v3 or x86-64-v4, got {}", shown(c.isa)));
  if (c.runtime != "static" && c.runtime != "dynamic")
    fail(fmt::format("--runtime must be static or dynamic, got {}", shown(c.runtime)));
  if (c.threads_given) check_at_least("threads", c.threads, 1);
  if (c.threads_given && c.threads > kMaxThreads)
    fail(fmt::format("--threads must be at most {}, got {}", kMaxThreads, c.threads));
  check_at_least("sweep_vars", c.sweep_vars, 1);
  check_at_least("chunk_vars", c.chunk_vars, 0);
  check_at_least("batch_tsteps", c.batch_tsteps, 1);
  check_range("map_ahead", c.map_ahead, 0, 1);
  check_at_least("task_order_seed", c.task_order_seed, 0);
  static constexpr std::array<std::string_view, 5> kStrategies{"none", "diffusion", "sfc",
                                                               "central", "predictive"};
  if (std::ranges::find(kStrategies, c.lb) == kStrategies.end())
    fail(fmt::format("--lb must be one of none, diffusion, sfc, central, predictive, got {}",
                     shown(c.lb)));
  if (c.lb_given && c.runtime != "dynamic")
    fail(
        "--lb chooses the dynamic runtime's balancer: add --runtime dynamic (the static runtime "
        "balances block counts, --lb_opt and --inbalance)");
  if (!(c.lb_threshold >= 1.0))
    fail(fmt::format("--lb_threshold must be at least 1 (max over mean), got {}", c.lb_threshold));
  check_at_least("lb_freq", c.lb_freq, 1);
  if (!(c.lb_max_move > 0.0 && c.lb_max_move <= 1.0))
    fail(fmt::format("--lb_max_move must be above 0 and at most 1, got {}", c.lb_max_move));
  // Both multiply the run's time: past these bounds a run would not end in any useful time.
  if (!(c.noise >= 0.0 && c.noise <= kMaxNoise))
    fail(fmt::format("--noise must be between 0 and {} (sigma, in units of a task's time), got {}",
                     kMaxNoise, c.noise));
  (void)c.slow_rank_factors();  // throws on a malformed --slow_rank
  if (!c.lb_replay_path.empty() && c.runtime != "dynamic")
    fail("--lb_replay replays the dynamic runtime's balancer: add --runtime dynamic");
  if (!c.lb_link_model_path.empty() && c.runtime != "dynamic")
    fail("--lb_link_model prices the dynamic runtime's migrations: add --runtime dynamic");
  if (!c.lb_log_path.empty() && c.runtime != "dynamic")
    fail("--lb_log logs the dynamic runtime's balancer: add --runtime dynamic");
}

void check_checkpoints(const Config& c) {
  check_at_least("checkpoint_freq", c.checkpoint_freq, 0);
  check_at_least("checkpoint_keep", c.checkpoint_keep, 1);
  if (c.checkpoint_freq > 0 && c.checkpoint_dir.empty())
    fail("--checkpoint_freq needs a --checkpoint_dir to write into");
  if (!c.checkpoint_dir.empty() && c.checkpoint_freq == 0)
    fail("--checkpoint_dir needs a --checkpoint_freq (timesteps between checkpoints)");
}

void check_compute(const Config& c) {
  if (c.compute != "real" && c.compute != "model")
    fail(fmt::format("--compute must be real or model, got {}", shown(c.compute)));
  const bool model = c.compute == "model";
  if (model && c.calibration_path.empty())
    fail("--compute model needs a --calibration FILE (tools/calibrate_compute.py writes one)");
  if (!c.calibration_path.empty() && !model)
    fail("--calibration prices the kernels of --compute model: add --compute model");
#ifdef MINIAMR_SIMGRID
  // SMPI simulates one flow of control per rank; MPI_Comm_spawn does not exist there, and
  // checkpoints need parallel HDF5 over the real Open MPI.
  if (c.launch == "spawn")
    fail("--launch spawn is not available in the simulation build (SMPI cannot spawn ranks)");
  if (c.checkpoint_freq > 0 || !c.restart_path.empty() || c.plot_format != "text")
    fail(fmt::format(
        "{} is not available in the simulation build (its files need parallel HDF5 over the real "
        "MPI library)",
        c.checkpoint_freq > 0
            ? "--checkpoint_freq"
            : (!c.restart_path.empty() ? "--restart" : "--plot_format " + c.plot_format)));
  if (c.threads_given && c.threads > 1)
    fail(
        fmt::format("--threads {}: the simulation build runs one worker thread per simulated "
                    "rank (SMPI ranks are not OS threads)",
                    c.threads));
#else
  if (model)
    fail(
        "--compute model needs the simulation build (cmake -DMINIAMR_SIMGRID=ON, run through "
        "tools/miniamr-simulate): a real run would only report the modelled cost, not a time");
#endif
}

void check_launch(const Config& c) {
  if (c.launch != "mpirun" && c.launch != "spawn")
    fail(fmt::format("--launch must be mpirun or spawn, got {}", shown(c.launch)));
  const bool spawn = c.launch == "spawn";
  if (spawn && !c.workers_given) fail("--launch spawn needs --workers N (the processes to spawn)");
  if (c.workers_given && !spawn) fail("--workers counts spawned processes: add --launch spawn");
  if (spawn) check_at_least("workers", c.workers, 1);
  if (!c.plan.empty() && !spawn) fail("--plan places spawned workers: add --launch spawn");
  if (c.plan_strict && c.plan.empty()) fail("--plan_strict needs a --plan");
  if (!(c.plan_timeout > 0 && c.plan_timeout <= 3600))
    fail(fmt::format("--plan_timeout must be above 0 and at most 3600 seconds, got {}",
                     c.plan_timeout));
  if (!c.plan.empty()) (void)parse_plan_source(c.plan);  // throws on an unparsable address
}

void check_time_loop(const Config& c) {
  if (c.time_given && !(c.time > 0)) fail(fmt::format("--time must be positive, got {}", c.time));
  // --time alone ignores num_tsteps; --time with --num_tsteps n uses a time step of T/n.
  if (!c.time_given || c.num_tsteps_given) check_at_least("num_tsteps", c.num_tsteps, 1);
  check_at_least("stages_per_ts", c.stages_per_ts, 1);
  check_at_least("checksum_freq", c.checksum_freq, 0);
  // 10^-E must be a positive double (10^-308 is the smallest normal power of ten).
  if (c.error_tol < 0 || c.error_tol > 308)
    fail(fmt::format(
        "--error_tol must be between 0 and 308 (the tolerance is 10^-E, a positive double), got {}",
        c.error_tol));
  check_at_least("plot_freq", c.plot_freq, 0);
  if (c.plot_format != "text" && c.plot_format != "xdmf" && c.plot_format != "vtkhdf")
    fail(fmt::format("--plot_format must be text, xdmf or vtkhdf, got {}", shown(c.plot_format)));
  (void)c.plot_variables();  // throws on a malformed --plot_vars
  if (!c.plot_vars.empty() && c.plot_format == "text")
    fail(
        "--plot_vars chooses the variables of xdmf and vtkhdf plots: add --plot_format xdmf or "
        "vtkhdf");
  check_at_least("progress_every", c.progress_every, 1);
  if (!(c.progress_interval >= 0 && c.progress_interval <= 86400))
    fail(
        fmt::format("--progress_interval must be 0 to 86400 seconds, got {}", c.progress_interval));
  if (!c.results_format.empty() && c.results_format != "yaml" && c.results_format != "json")
    fail(fmt::format("--results_format must be yaml or json, got {}", shown(c.results_format)));
  check_range("report_perf", c.report_perf, 0, 15);
}

bool known_object_type(int type) {
  return (type >= 0 && type <= 15) || (type >= 20 && type <= 25);
}

void check_objects(const Config& c) {
  for (std::size_t i = 0; i < c.objects.size(); ++i) {
    const Object& o = c.objects[i];
    if (!known_object_type(o.type)) {
      fail(fmt::format("object {}: unknown object type {} (valid: 0-15, 20-25)", i + 1, o.type));
    }
    if (o.bounce < 0 || o.bounce > 2) {
      fail(fmt::format("object {}: bounce must be 0, 1 or 2, got {}", i + 1, o.bounce));
    }
  }
}

}  // namespace

std::vector<std::pair<int, double>> Config::slow_rank_factors() const {
  std::vector<std::pair<int, double>> out;
  std::set<int> seen;
  for (const std::string& text : slow_ranks) {
    const auto colon = text.find(':');
    const Where where{"", false};
    if (colon == std::string::npos)
      fail(fmt::format("--slow_rank expects RANK:FACTOR or FIRST-LAST:FACTOR (e.g. 1:2), got {}",
                       shown(text)));
    // One rank, or a range of them (the ranks of a simulated node, say).
    const std::string_view ranks = std::string_view(text).substr(0, colon);
    const auto dash = ranks.find('-', 1);
    const int first = to_int(ranks.substr(0, dash), "--slow_rank rank", where);
    const int last = dash == std::string_view::npos
                         ? first
                         : to_int(ranks.substr(dash + 1), "--slow_rank rank", where);
    const double factor =
        to_real(std::string_view(text).substr(colon + 1), "--slow_rank factor", where);
    if (first < 0) fail(fmt::format("--slow_rank rank must be non-negative, got {}", first));
    if (last < first)
      fail(fmt::format("--slow_rank {}: the range's last rank is below its first", shown(text)));
    if (!(factor >= 1.0))
      fail(fmt::format("--slow_rank factor must be at least 1 (a slowdown), got {}", factor));
    if (factor > kMaxSlowdown)
      fail(fmt::format("--slow_rank factor must be at most {}, got {}", kMaxSlowdown, factor));
    if (std::int64_t(last) - first >= kMaxSlowRanks)
      fail(fmt::format("--slow_rank {}: a range of more ranks than any run has", shown(text)));
    for (int r = first; r <= last; ++r) {
      if (!seen.insert(r).second)
        fail(
            fmt::format("--slow_rank: rank {} is given twice (again in {}); give each rank one "
                        "factor",
                        r, shown(text)));
      out.emplace_back(r, factor);
    }
  }
  return out;
}

std::vector<int> Config::plot_variables() const {
  if (plot_vars.empty()) return {0};
  std::vector<int> out;
  const Where where{"", false};
  std::string_view rest = plot_vars;
  while (true) {
    const auto comma = rest.find(',');
    const int v = to_int(rest.substr(0, comma), "--plot_vars entry", where);
    if (v < 0 || v >= num_vars)
      fail(fmt::format("--plot_vars {}: variable {} does not exist (--num_vars {}: 0 to {})",
                       shown(plot_vars), v, num_vars, num_vars - 1));
    if (std::ranges::find(out, v) != out.end())
      fail(fmt::format("--plot_vars {}: variable {} is listed twice", shown(plot_vars), v));
    out.push_back(v);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

void validate_config(const Config& config) {
  check_block_size(config);  // first: later checks multiply sizes
  check_grid(config);
  check_refinement(config);
  check_work(config);
  check_time_loop(config);
  check_objects(config);
  check_runtime(config);
  check_launch(config);
  check_checkpoints(config);
  check_compute(config);
}

std::vector<std::string> config_warnings(const Config& config) {
  std::vector<std::string> warnings;
  if (config.stencil == 27 && config.num_refine > 0 && config.uniform_refine == 0) {
    warnings.emplace_back(
        "WARNING: 27 point stencil with non-uniform refinement: answers may diverge");
  }
  return warnings;
}

ParsedOptions parse_options(std::span<const std::string> args, const DeckReader& read) {
  ParsedOptions parsed;
  if (std::ranges::any_of(args, [](const std::string& a) { return a == "--help" || a == "-h"; })) {
    parsed.help = true;  // help wins over everything else, even bad options
    return parsed;
  }
  if (std::ranges::any_of(args, [](const std::string& a) { return a == "--version"; })) {
    parsed.version = true;
    return parsed;
  }
  State state;
  if (!args.empty() && !args[0].starts_with('-')) {
    apply_deck(state, read(args[0]));
    state.config.deck_path = args[0];
    args = args.subspan(1);
  }
  apply_cli(state, args);
  check_object_count(state);
  if (state.quiet && state.verbose) fail("--quiet and --verbose contradict each other: give one");
  state.config.verbosity = state.quiet     ? Verbosity::kQuiet
                           : state.verbose ? Verbosity::kVerbose
                                           : Verbosity::kNormal;
  validate_config(state.config);
  parsed.config = std::move(state.config);
  parsed.warnings = config_warnings(parsed.config);
  return parsed;
}

namespace {

// The help text's topics, in Group's order: a heading and what the options there decide.
constexpr std::array<std::pair<std::string_view, std::string_view>, 10> kGroups{{
    {"run", "What is computed, and for how long"},
    {"mesh", "The root grid, the blocks and how they refine"},
    {"objects", "The shapes that move through the domain and drive refinement"},
    {"runtime", "Who runs the stages, on how many threads, with which kernels"},
    {"balancer",
     "Who owns which blocks: the static runtime's cut of the curve, the dynamic "
     "runtime's balancer"},
    {"output", "What rank 0 prints, and the files the run writes"},
    {"launch", "How the ranks start: all by the launcher, or spawned by one process"},
    {"checkpoint", "Saving the run, and continuing it"},
    {"simulation", "The SimGrid build: modelled kernels on simulated ranks"},
    {"compatibility",
     "Options of the reference miniAMR, accepted so that its command lines run; none changes "
     "what runs here (a run given one says so)"},
}};

// `text` as lines of at most `width` characters, each after `indent` spaces but the first.
std::string wrapped(std::string_view text, std::size_t indent, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
    start = end + 1;
  }
  return out + line;
}

}  // namespace

std::string help_text() {
  constexpr std::size_t kHeadWidth = 24, kIndent = kHeadWidth + 3, kWidth = 79;
  std::string text = "usage: miniamr [DECK] [--option value ...]\n\n" +
                     wrapped(
                         "DECK is an optional input file of 'key = value' lines using the "
                         "option names below without dashes (e.g. 'nx = 16', 'permute = "
                         "true', one 'object = ...' line per object); '#' starts a comment. "
                         "Options on the command line override the deck; any --object there "
                         "replaces all of the deck's objects. Run it under mpirun (any "
                         "number of ranks), or alone.",
                         0, kWidth) +
                     "\n";
  for (std::size_t g = 0; g < kGroups.size(); ++g) {
    text += fmt::format("\n{} options:\n  {}.\n\n", kGroups[g].first,
                        wrapped(kGroups[g].second, 2, kWidth));
    for (const OptionSpec& spec : kOptions) {
      if (spec.group != static_cast<Group>(g)) continue;
      const std::string head = fmt::format("--{} {}", spec.name, spec.args);
      // A head wider than its column (--object) gets the meaning on a line of its own.
      const std::string gap = head.size() < kHeadWidth ? "" : "\n" + std::string(kIndent - 1, ' ');
      text += fmt::format(
          "  {:<{}}{} {}\n", head, kHeadWidth, gap,
          wrapped(fmt::format("{} [default: {}]", spec.meaning, spec.fallback), kIndent, kWidth));
    }
  }
  text += "\nother options:\n";
  text += fmt::format("  {:<{}} {}\n", "--help, -h", kHeadWidth, "print this text and exit");
  text += fmt::format("  {:<{}} {}\n", "--version", kHeadWidth,
                      wrapped("print the version, git revision, compiler and libraries, and exit",
                              kIndent, kWidth));
  text +=
      "\n"
      "object types (--object's first value):\n"
      "  0 box surface, 1 solid box, 2 spheroid surface, 3 solid spheroid, 4..15\n"
      "  hemispheroids (even surface, odd solid; 4/5 +x half, 6/7 -x, 8/9 +y, 10/11 -y,\n"
      "  12/13 +z, 14/15 -z), 20..25 cylinders along x, y, z (even surface, odd solid).\n"
      "\n"
      "bounce modes (its second value):\n"
      "  0 none, 1 the centre reflects off the domain walls, 2 edge bounce (a no-op in\n"
      "  the reference miniAMR, and so here).\n";
  return text;
}

}  // namespace miniamr::app
