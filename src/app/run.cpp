#include "app/run.hpp"

#include <sched.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <cstdlib>
#include <memory>
#include <utility>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/build_info.hpp"
#include "app/calibration_file.hpp"
#include "app/checkpoint.hpp"
#include "app/collective_error.hpp"
#include "app/deck.hpp"
#include "app/errors.hpp"
#include "app/input_file.hpp"
#include "app/launch.hpp"
#include "app/memory_budget.hpp"
#include "app/options.hpp"
#include "app/placement_plan.hpp"
#include "app/plot_files.hpp"
#include "app/report.hpp"
#include "app/root_io.hpp"
#include "app/simulation.hpp"
#include "comm/mpi.hpp"
#include "io/output_file.hpp"
#include "io/printable.hpp"
#include "runtime/dynamic_runtime.hpp"
#include "runtime/static_runtime.hpp"
#include "runtime/trace.hpp"
#include "stencil/hash.hpp"
#include "stencil/kernel_set.hpp"
#ifdef MINIAMR_HAVE_KOKKOS
#include "stencil_kokkos/kokkos_stencil.hpp"
#endif

namespace miniamr::app {

namespace {

// What miniamr does instead of the reference options that select RCB or message details.
std::vector<std::string> substitution_notes(const Config& c, int ranks) {
  std::vector<std::string> notes;
  if (c.npx * c.npy * c.npz != ranks)
    notes.push_back(fmt::format(
        "Note: {} ranks run the {}x{}x{} root grid of --npx {} --npy {} --npz {} (ownership "
        "follows "
        "the Morton curve, not the rank grid)",
        ranks, c.npx * c.init_x, c.npy * c.init_y, c.npz * c.init_z, c.npx, c.npy, c.npz));
  if (c.lb_method == LbMethod::kRcb && ranks > 1 &&
      (c.change_dir || c.group_blocks != 0 || c.reorder != -1))
    notes.push_back(
        "Note: ownership is a weighted cut of the Morton curve, not RCB; --change_dir, "
        "--group_blocks, --break_ties and --reorder change nothing");
  if (c.lb_method == LbMethod::kHilbert)
    notes.push_back(
        "Note: --hilbert: ownership follows a Hilbert curve through the root grid padded to a "
        "power-of-two cube (the reference's --trunc_hilbert construction)");
  if (c.limit_move != 0)
    notes.push_back("Note: --limit_move is not applied: a rebalance always reaches the even cut");
  if (c.send_faces)
    notes.push_back(
        "Note: --send_faces: faces are still aggregated into one message per neighbour rank");
  if (c.code != 0)
    notes.push_back(
        "Note: --code: ghost messages always carry exactly the faces the stencil reads");
  if (c.permute)
    notes.push_back(
        "Note: --permute: the 7-point exchange does all axes at once; 27-point keeps x, y, z");
  return notes;
}

// Every output file must be writable before any work starts, with the system's reason when it
// is not. Rank 0 decides and every rank learns the verdict, so all fail together.
void check_output_paths(const Config& config, MPI_Comm comm, bool root) {
  std::vector<std::pair<std::string, std::string>> outputs;  // (what, path)
  for (const auto& [what, path] : {std::pair{"--trace", &config.trace_path},
                                   std::pair{"--dump_graph", &config.dump_graph_path},
                                   std::pair{"--lb_log", &config.lb_log_path}})
    if (!path->empty()) outputs.emplace_back(what, *path);
  if (config.results_wanted())
    outputs.emplace_back(config.results_path.empty() ? "--report_perf 1" : "--results",
                         config.results_file());
  if (config.report_perf & 2) outputs.emplace_back("--report_perf 2", "results.txt");
  if (config.plot_freq > 0) {
    outputs.emplace_back("--plot_freq", first_plot_path(config));
    if (config.plot_format != "text") outputs.emplace_back("--plot_freq", plot_index_path(config));
  }
  if (config.checkpoint_freq > 0)
    outputs.emplace_back("--checkpoint_dir", checkpoint_path(config.checkpoint_dir, 0));
  all_or_none(comm, "checking the output files", [&] {
    if (!root) return;
    if (config.plot_freq > 0)
      if (const std::string why = make_plot_dir(config); !why.empty())
        throw UsageError(fmt::format("--plot_dir {}: {}", io::shown(config.plot_dir, 200), why));
    if (config.checkpoint_freq > 0) {
      std::error_code ec;
      std::filesystem::create_directories(config.checkpoint_dir, ec);
      if (ec)
        throw UsageError(fmt::format("--checkpoint_dir {}: cannot create it: {}",
                                     io::shown(config.checkpoint_dir, 200), ec.message()));
    }
    for (const auto& [what, path] : outputs)
      if (const std::string why = io::unwritable_reason(path); !why.empty())
        throw UsageError(
            fmt::format("{} {}: cannot write there: {}", what, io::shown(path, 200), why));
  });
}

// Collective. Threads beyond a node's cores only wait for each other (10000 of them did not run 5
// small timesteps in a minute): at most one per core, or kMaxOversubscription per core where
// the launcher allows oversubscribing. Every rank checks its own node.
void check_thread_count(int threads, bool given, MPI_Comm comm) {
  all_or_none(comm, "checking the thread count", [&] {
#ifndef MINIAMR_SIMGRID  // (simulated ranks run one thread each)
    const int cores = std::max(1, int(std::thread::hardware_concurrency()));
    const bool oversubscribe = oversubscription_allowed();
    const int most = cores * (oversubscribe ? kMaxOversubscription : 1);
    if (threads <= most) return;
    const std::string what =
        given ? fmt::format("--threads {}", threads) : fmt::format("OMP_NUM_THREADS={}", threads);
    throw UsageError(
        oversubscribe
            ? fmt::format("{}: more than {} threads per core on a node of {} core{}, even "
                          "oversubscribed: at most {}",
                          what, kMaxOversubscription, cores, cores == 1 ? "" : "s", most)
            : fmt::format("{}: more threads than the {} core{} of this node (threads beyond the "
                          "cores only wait for each other): at most {}, or up to {} per core "
                          "where oversubscribing is allowed (mpirun --oversubscribe)",
                          what, cores, cores == 1 ? "" : "s", most, kMaxOversubscription));
#else
    (void)threads;
    (void)given;
#endif
  });
}

// Refuses, before any block is made, a mesh that cannot fit in memory: the root grid spread
// over the ranks, times 8 per level when --uniform_refine refines every block.
void check_initial_memory(const Config& config, const MemoryBudget& budget, int ranks) {
  const auto roots = config.root_blocks();
  const double per_rank = std::ceil(double(roots[0]) * roots[1] * roots[2] / ranks);
  const double blocks =
      per_rank * (config.uniform_refine != 0 ? std::pow(8.0, double(config.num_refine)) : 1.0);
  const std::string why = does_not_fit(
      blocks, config.block_shape(), budget,
      config.uniform_refine != 0 ? "the uniformly refined mesh needs" : "the initial mesh needs");
  if (!why.empty())
    throw UsageError(why + "; use smaller or fewer blocks, fewer variables or more ranks");
}

// The instruction-set level of the native kernels: --isa, or the widest every rank's machine
// runs (a job may span nodes of different generations).
stencil::Isa kernel_isa(const std::string& wanted, MPI_Comm comm) {
  if (wanted != "auto") {
    const stencil::Isa isa = *stencil::parse_isa(wanted);
    int missing = stencil::isa_supported(isa) ? 0 : 1;
    MPI_Allreduce(MPI_IN_PLACE, &missing, 1, MPI_INT, MPI_MAX, comm);
    if (missing != 0)
      throw UsageError(fmt::format("--isa {}: {} on this machine", wanted,
                                   stencil::isa_supported(isa)
                                       ? "not supported by another rank's CPU"
                                       : "not supported by the CPU"));
    return isa;
  }
  int level = static_cast<int>(stencil::best_isa());
  MPI_Allreduce(MPI_IN_PLACE, &level, 1, MPI_INT, MPI_MIN, comm);
  return static_cast<stencil::Isa>(level);
}

// Collective over `comm`: one allreduce. Ranks started with different options (an MPMD launch,
// a wrapper script that adds options on some ranks) would run different programs and wait for
// each other forever: every rank's options must be rank 0's. The deck path is left out, since
// rank 0 reads the deck for every rank (node-local copies may have other paths).
void check_same_options(MPI_Comm comm, const std::vector<std::string>& args) {
  std::uint64_t h = 0x6f707473ull;  // "opts"
  const bool deck = !args.empty() && !args[0].starts_with('-');
  h = stencil::hash_combine(h, deck ? 1 : 0);
  for (std::size_t i = deck ? 1 : 0; i < args.size(); ++i) {
    h = stencil::hash_combine(h, args[i].size());
    for (const char c : args[i]) h = stencil::hash_combine(h, std::uint8_t(c));
  }
  // The largest hash and the complement of the smallest: equal everywhere when all agree.
  std::uint64_t both[2] = {h, ~h};
  MPI_Allreduce(MPI_IN_PLACE, both, 2, MPI_UINT64_T, MPI_MAX, comm);
  if (both[0] != ~both[1])
    throw UsageError(
        "the ranks were started with different options (an MPMD launch or a wrapper script?): "
        "every rank must get the same options; start them all with one command line");
}

// Collective over `comm`. Rank 0 reads the deck and every rank parses its text: all ranks run
// the same input even where files differ between nodes or exist on some only, and agree on any
// input error without further messages; only rank 0 speaks.
ParsedOptions parse_on(MPI_Comm comm, const std::vector<std::string>& args) {
  check_same_options(comm, args);
  const auto read_on_root = [comm](const std::string& path) {
    return parse_deck(text_from_root(comm, [&] { return read_deck_text(path); }), path);
  };
  ParsedOptions parsed = parse_options(args, read_on_root);
  parsed.config.command_line = args;
  return parsed;
}

// A spawn that has not returned by then is taken as one of Open MPI 4's spawn hangs.
constexpr std::chrono::seconds kSpawnDeadline{120};

// --launch spawn, on the main process: places and spawns the workers, then parses the options
// again together with them (they parse theirs on the merged communicator).
Placement spawn_workers(const Config& config, World& world, const std::vector<std::string>& args,
                        ParsedOptions& parsed) {
  if (world.size() != 1)
    throw UsageError(fmt::format(
        "--launch spawn starts from one process, which spawns the workers; this run has {} "
        "(use mpirun -np 1, or no mpirun)",
        world.size()));
  check_worker_slots(config.workers);
  const PlanOptions plan{config.plan, config.plan_strict,
                         std::chrono::milliseconds(std::llround(config.plan_timeout * 1000))};
  Placement placement = resolve_placement(plan, config.workers);
  if (!placement.fallback.empty() && config.verbosity != Verbosity::kQuiet)
    fmt::print(stderr, "miniamr: {}; the workers go where the launcher maps them\n",
               io::printable(placement.fallback));
  world.spawn(args, config.workers, placement.hosts, kSpawnDeadline);
  parsed = parse_on(world.comm(), args);
  return placement;
}

int run_checked(const std::vector<std::string>& args, World& world) {
  ParsedOptions parsed = parse_on(world.comm(), args);
  const bool root = world.rank() == 0;
  if (parsed.help || parsed.version) {
    if (root) fmt::print("{}", parsed.help ? help_text() : version_text());
    return 0;
  }
  Placement placement;
  if (parsed.config.launch == "spawn" && !world.spawned())
    placement = spawn_workers(parsed.config, world, args, parsed);
  const MPI_Comm world_comm = world.comm();
  const Config& config = parsed.config;
  if (config.kokkos && !runtime::StageKernels::has_kokkos())
    throw UsageError(
        "--kokkos: this miniamr was built without Kokkos (-DMINIAMR_ENABLE_KOKKOS=ON)");
  if (config.kokkos && config.stencil == 0 && root)
    fmt::print("Note: --kokkos covers the 7- and 27-point stencils; --stencil 0 runs natively\n");
#ifdef MINIAMR_HAVE_KOKKOS
  // Kokkos starts only when asked for, inside MPI's lifetime, and never sees miniamr's command
  // line (it would take --help for its own).
  struct KokkosScope {
    explicit KokkosScope(bool on) : on_(on) {
      int argc = 1;
      char name[] = "miniamr";
      char* argv[] = {name, nullptr};
      if (on_) stencil_kokkos::initialize(argc, argv);
    }
    ~KokkosScope() {
      if (on_) stencil_kokkos::finalize();
    }
    KokkosScope(const KokkosScope&) = delete;
    KokkosScope& operator=(const KokkosScope&) = delete;
    bool on_;
  } kokkos(config.kokkos);
#endif
  // Worker threads: --threads, else OMP_NUM_THREADS (which the caller may have set), else 1.
  const int threads = config.threads_given ? config.threads : runtime::thread_count();
  check_thread_count(threads, config.threads_given, world_comm);
#ifdef _OPENMP
  omp_set_num_threads(threads);
#endif
  const bool dynamic = config.runtime == "dynamic";
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  if (dynamic && threads > 1 && level < MPI_THREAD_SERIALIZED)
    throw UsageError(fmt::format(
        "--runtime dynamic with {} threads needs MPI_THREAD_SERIALIZED, but this MPI library "
        "granted level {}",
        threads, level));
  check_output_paths(config, world_comm, root);
  // Held until the run ends: no other run publishes or prunes checkpoints in this folder.
  const io::FolderLock checkpoint_lock = lock_checkpoint_dir(config, world_comm);
  // mpirun binds each rank to one core by default when ranks fill the machine: more threads
  // than that would share it.
  cpu_set_t mask;
  const int cpus = sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : threads;
  int short_of_cores = cpus < threads ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &short_of_cores, 1, MPI_INT, MPI_MAX, world_comm);
  if (short_of_cores && root)
    fmt::print(
        "Note: a rank may use fewer cores than its {} threads (mpirun binds ranks to cores; "
        "launch with --bind-to none or --map-by slot:PE={})\n",
        threads, threads);

  runtime::RuntimeOptions options;
  options.blocking_send = config.blocking_send;
  options.ownership = config.hilbert_ownership() ? sfc::Curve::kHilbert : sfc::Curve::kMorton;
  options.deepest_level = config.num_refine;
  options.kernels =
      config.kokkos ? runtime::KernelBackend::kKokkos : runtime::KernelBackend::kNative;
  options.isa = kernel_isa(config.isa, world_comm);
  options.threads = threads;
  options.sweep_vars = config.sweep_vars;
  options.chunk_vars = config.chunk_vars;
  options.order_seed = std::uint64_t(config.task_order_seed);
  int ranks = 1, me = 0;
  MPI_Comm_size(world_comm, &ranks);
  MPI_Comm_rank(world_comm, &me);
  for (const auto& [rank, factor] : config.slow_rank_factors()) {
    if (rank >= ranks)
      throw UsageError(
          fmt::format("--slow_rank {}:{}: there are only ranks 0 to {}", rank, factor, ranks - 1));
    if (rank == me) options.slow_factor = factor;
  }
  options.noise = config.noise;
  if (config.compute == "model")
    options.compute_model = parse_calibration(
        text_from_root(world_comm,
                       [&] { return read_input_text(config.calibration_path, "calibration"); }),
        config.calibration_path, config.runtime);
  const MemoryBudget budget = memory_budget(world_comm, config.max_memory);
  check_initial_memory(config, budget, ranks);
  std::unique_ptr<runtime::Runtime> rt;
  if (dynamic)
    rt = std::make_unique<runtime::DynamicRuntime>(world_comm, options);
  else
    rt = std::make_unique<runtime::StaticRuntime>(world_comm, options);
  runtime::Trace trace = config.trace_path.empty() ? runtime::Trace() : runtime::Trace(threads);
  rt->set_trace(&trace);
  if (root && config.verbosity != Verbosity::kQuiet) {
    for (const auto& w : parsed.warnings) fmt::print("{}\n", w);
    for (const auto& n : substitution_notes(config, rt->comm().size())) fmt::print("{}\n", n);
  }
  Simulation sim(config, *rt, root ? stdout : nullptr, &trace, budget);
  sim.run();
  const Report report = gather_report(config, sim, *rt, placement);
  // The report reaches stdout (and whatever file it goes to) before any file is written, so a
  // file that fails cannot take the final checksums with it.
  if (root && (config.report_perf & 4)) {
    if (config.verbosity == Verbosity::kQuiet)
      fmt::print("{}\n", summary_line(report));
    else
      print_report(stdout, report);
  }
  std::fflush(stdout);
  if (!config.trace_path.empty())
    if (const std::string why = trace.write(rt->comm(), config.trace_path); !why.empty())
      throw RunError(
          fmt::format("cannot write --trace file {}: {}", io::shown(config.trace_path, 200), why));
  const MPI_Comm comm = rt->comm().get();
  if (config.results_wanted()) {
    std::string text;
    if (root) text = config.results_json() ? results_json(report) : results_yaml(report);
    write_on_root(comm, config.results_file(), text, "results file");
  }
  if (config.report_perf & 2)
    write_on_root(comm, "results.txt", root ? results_txt(report) : "", "results file");
  return 0;
}

// An error on one rank where the others may be waiting for it in a collective: only ending the
// whole job can free them. Said by the failing rank, once, before MPI_Abort.
[[noreturn]] void last_resort(MPI_Comm world, int rank, std::string_view what) {
  std::fflush(stdout);
  fmt::print(stderr, "miniamr: rank {}: {}; ending every rank\n", rank, io::printable(what));
  std::fflush(stderr);
  MPI_Abort(world, RunError::kExitStatus);
  std::abort();  // MPI_Abort does not return
}

}  // namespace

int run(int argc, char** argv) {
#ifdef __GLIBC__
  // Blocks come and go by the thousand as the mesh adapts. glibc raises its mmap threshold
  // after the first large free, and later blocks then fragment the heap (peak memory 1.6x the
  // block storage in the moving-sphere run); a fixed threshold keeps every block in its own
  // mapping, returned to the system when freed (1.05x).
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  // A file-size limit (ulimit -f) would kill the rank that reaches it with SIGXFSZ and leave
  // the others waiting; ignored, it is a failed write like a full disk, reported and shared.
  std::signal(SIGXFSZ, SIG_IGN);
  // A spawned worker ends itself when its main process is gone or never takes it in, from
  // before MPI_Init on (inactive in any other process).
  SpawnGuard spawn_guard;
  comm::MpiEnvironment mpi(argc, argv);
#ifdef _OPENMP
  // Threads come from OMP_NUM_THREADS only: OpenMP's own default (every core) would put
  // several ranks' threads on the same cores.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) omp_set_num_threads(1);
#endif
  World world;  // a spawned worker joins its main process here
  spawn_guard.joined();
  // Progress must reach a pipe (tee, a batch system's log) as it happens, not in bursts.
  if (world.rank() == 0) std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::vector<std::string> args(argv + 1, argv + argc);
  int status = 0;
  // Rank 0 of the run's world (which a spawn changes) says what went wrong.
  const auto rank = [&world] { return world.rank(); };
  const auto root = [&world] { return world.rank() == 0; };
  try {
    status = run_checked(args, world);
  } catch (const SpawnError& e) {
    std::fflush(stdout);
    fmt::print(stderr, "miniamr: {}\n", io::printable(e.what()));
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, RunError::kExitStatus);  // MPI_Finalize can hang after a failed spawn
  } catch (const UsageError& e) {
    // Collective: every rank threw the same error; rank 0 says it.
    if (root())
      fmt::print(stderr, "miniamr: error: {}\n(run 'miniamr --help' for the options)\n",
                 io::printable(e.what()));
    status = UsageError::kExitStatus;
  } catch (const RunError& e) {
    if (root()) fmt::print(stderr, "miniamr: {}\n", io::printable(e.what()));
    status = RunError::kExitStatus;
  } catch (const std::bad_alloc&) {
    last_resort(world.comm(), rank(), "out of memory");
  } catch (const std::exception& e) {
    last_resort(world.comm(), rank(), e.what());
  }
  spawn_guard.stop();  // (the main process may end before a worker's MPI_Finalize does)
  std::fflush(stdout);
  return status;
}

}  // namespace miniamr::app
