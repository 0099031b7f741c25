#include "netbench/netbench.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "app/build_info.hpp"
#include "app/collective_error.hpp"
#include "app/errors.hpp"
#include "app/root_io.hpp"
#include "comm/mpi.hpp"
#include "io/output_file.hpp"
#include "io/printable.hpp"
#include "netbench/cli.hpp"
#include "netbench/config.hpp"
#include "netbench/config_file.hpp"
#include "netbench/measure.hpp"
#include "netbench/model_file.hpp"
#include "netbench/models.hpp"
#include "netbench/plots.hpp"
#include "netbench/schedule.hpp"

namespace miniamr::netbench {

namespace {

using app::RunError;
using app::UsageError;
namespace fs = std::filesystem;

std::string version_text() {
  const app::BuildInfo b = app::build_info();
  return fmt::format("miniamr-netbench {} (git {})\ncompiler: {}\nMPI: {}\n", b.version,
                     b.git_revision, b.compiler, b.mpi_library);
}

// The output folder, made if missing, and writable (rank 0 only).
void prepare_out_dir(const std::string& dir) {
  const auto refuse = [&](std::string_view why) {
    return UsageError(fmt::format("--out {}: cannot write there: {}", io::shown(dir, 200), why));
  };
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw refuse("it is not a folder");
  fs::create_directories(dir, ec);
  if (ec) throw refuse(ec.message());
  if (const std::string why = io::unwritable_reason((fs::path(dir) / "results.csv").string());
      !why.empty())
    throw refuse(why);
}

int run_checked(const std::vector<std::string>& args, bool root) {
  const CommandLine cl = parse_command_line(args);
  if (cl.help || cl.version) {
    if (root) fmt::print("{}", cl.help ? help_text() : version_text());
    return 0;
  }
  // Every step's messages in a communicator of their own.
  const comm::Communicator comm;
  const BenchConfig config = parse_config(
      app::text_from_root(comm.get(), [&] { return read_config_text(cl.config_path); }),
      cl.config_path);
  app::all_or_none(comm.get(), "preparing the output folder", [&] {
    if (root) prepare_out_dir(cl.out_dir);
  });

  const Topology topology = gather_topology(comm.get());
  Schedule schedule;
  if (root) schedule = make_schedule(config, topology);
  schedule = broadcast_schedule(schedule, comm.get());
  if (root) {
    fmt::print("miniamr-netbench: {} ranks on {} node(s), {} steps\n", schedule.ranks,
               schedule.nodes, schedule.steps.size());
    for (const std::string& note : schedule.notes) fmt::print("{}\n", note);
  }
  const std::vector<ResultRow> rows =
      run_schedule(config, schedule, comm.get(), root ? stdout : nullptr);

  // The measurements are kept before anything can fail to fit them.
  const fs::path out(cl.out_dir);
  app::write_on_root(comm.get(), (out / "results.csv").string(), root ? results_csv(rows) : "",
                     "results file");
  std::vector<ClassModel> models;
  std::vector<std::string> notes;
  app::all_or_none(comm.get(), "fitting the models", [&] {
    if (!root) return;
    try {
      models = fit_models(rows, notes);
    } catch (const FitError& e) {
      throw RunError(fmt::format("cannot fit a model: {}", e.what()));
    }
  });
  if (root) {
    for (const std::string& note : notes) fmt::print("{}\n", note);
    for (const ClassModel& m : models)
      fmt::print(
          "{}: latency {:.3g} s, bandwidth {:.3g} B/s ({} sizes, residuals within {:.0f}%)\n",
          pair_class_name(m.pair_class), m.alpha_beta.latency_s, m.alpha_beta.bandwidth_Bps,
          m.alpha_beta.points, 100 * m.alpha_beta.max_rel_residual);
    if (models.empty()) fmt::print("Note: no ping-pong measured: no model.yaml\n");
  }
  // Only rank 0 holds the models; the broadcast schedule tells every rank whether there are any
  // (a ping-pong step ran), so all ranks take the same branch.
  bool any_pingpong = false;
  for (const Step& s : schedule.steps)
    any_pingpong = any_pingpong || config.tests[std::size_t(s.test)].kind == TestKind::kPingPong;
  if (any_pingpong) {
    const ModelSource source{cl.config_path, schedule.ranks, schedule.nodes, utc_now()};
    app::write_on_root(comm.get(), (out / "model.yaml").string(),
                       root ? model_yaml(app::build_info().version, source, models) : "",
                       "model file");
  }
  if (root && cl.plots) {
    std::fflush(stdout);
    if (const std::string why = draw_plots(cl.out_dir); !why.empty())
      fmt::print("Note: no plots: {}; results.csv and the model are written\n", why);
  }
  if (root) fmt::print("results in {}\n", io::shown(cl.out_dir, 200));
  return 0;
}

// An error on one rank where the others may be waiting for it: only ending the whole job can
// free them.
[[noreturn]] void last_resort(int rank, std::string_view what) {
  std::fflush(stdout);
  fmt::print(stderr, "miniamr-netbench: rank {}: {}; ending every rank\n", rank,
             io::printable(what));
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, RunError::kExitStatus);
  std::abort();
}

}  // namespace

int run(int argc, char** argv) {
  comm::MpiEnvironment mpi(argc, argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const bool root = rank == 0;
  if (root) std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const std::vector<std::string> args(argv + 1, argv + argc);
  int status = 0;
  try {
    status = run_checked(args, root);
  } catch (const UsageError& e) {
    if (root)
      fmt::print(stderr,
                 "miniamr-netbench: error: {}\n(run 'miniamr-netbench --help' for the options)\n",
                 io::printable(e.what()));
    status = UsageError::kExitStatus;
  } catch (const RunError& e) {
    if (root) fmt::print(stderr, "miniamr-netbench: {}\n", io::printable(e.what()));
    status = RunError::kExitStatus;
  } catch (const std::bad_alloc&) {
    last_resort(rank, "out of memory");
  } catch (const std::exception& e) {
    last_resort(rank, e.what());
  }
  std::fflush(stdout);
  return status;
}

}  // namespace miniamr::netbench
