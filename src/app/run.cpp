#include "app/run.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/errors.hpp"
#include "app/options.hpp"
#include "app/report.hpp"
#include "app/simulation.hpp"
#include "runtime/mpi.hpp"
#include "runtime/static_runtime.hpp"

namespace miniamr::app {

namespace {

// Every rank parses the same arguments (the deck is read on every rank), so all ranks agree on
// the outcome without a broadcast; only rank 0 speaks.
int run_checked(const std::vector<std::string>& args, runtime::StaticRuntime& rt) {
  const bool root = rt.comm().is_root();
  std::FILE* out = root ? stdout : nullptr;
  const ParsedOptions parsed = parse_options(args);
  if (parsed.help) {
    if (root) fmt::print("{}", help_text());
    return 0;
  }
  const Config& config = parsed.config;
  if (root) {
    for (const auto& w : parsed.warnings) fmt::print("{}\n", w);
    const int grid_ranks = config.npx * config.npy * config.npz;
    if (grid_ranks != rt.comm().size())
      fmt::print(
          "Note: {} ranks run the {}x{}x{} root grid of --npx {} --npy {} --npz {} "
          "(blocks follow the Morton curve, not the rank grid)\n",
          rt.comm().size(), config.npx * config.init_x, config.npy * config.init_y,
          config.npz * config.init_z, config.npx, config.npy, config.npz);
  }
  Simulation sim(config, rt, out);
  sim.run();
  const Report report = gather_report(config, sim, rt);
  if (root) {
    if (config.report_perf & 4) print_report(stdout, report);
    if (config.report_perf & 1) write_results_yaml("results.yaml", report);
  }
  return 0;
}

}  // namespace

int run(int argc, char** argv) {
  runtime::MpiEnvironment mpi(argc, argv);
  int status = 0;
  {
    runtime::StaticRuntime rt;
    const bool root = rt.comm().is_root();
    const std::vector<std::string> args(argv + 1, argv + argc);
    try {
      status = run_checked(args, rt);
    } catch (const UsageError& e) {
      if (root)
        fmt::print(stderr, "miniamr: error: {}\n(run 'miniamr --help' for the options)\n",
                   e.what());
      status = UsageError::kExitStatus;
    } catch (const RunError& e) {
      if (root) fmt::print(stderr, "miniamr: {}\n", e.what());
      status = RunError::kExitStatus;
    }
    std::fflush(stdout);
  }
  return status;
}

}  // namespace miniamr::app
