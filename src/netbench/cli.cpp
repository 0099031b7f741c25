#include "netbench/cli.hpp"

#include <fmt/format.h>

#include "app/errors.hpp"
#include "io/printable.hpp"

namespace miniamr::netbench {

CommandLine parse_command_line(std::span<const std::string> args) {
  using app::UsageError;
  CommandLine cl;
  bool config_given = false, out_given = false, no_plots_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&](bool& given) -> const std::string& {
      if (given) throw UsageError(fmt::format("{} is given twice", a));
      given = true;
      if (i + 1 >= args.size()) throw UsageError(fmt::format("missing value for {}", a));
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      cl.help = true;
    } else if (a == "--version") {
      cl.version = true;
    } else if (a == "--config") {
      cl.config_path = value(config_given);
    } else if (a == "--out") {
      cl.out_dir = value(out_given);
    } else if (a == "--no-plots") {
      if (no_plots_given) throw UsageError("--no-plots is given twice");
      no_plots_given = true;
      cl.plots = false;
    } else {
      throw UsageError(
          fmt::format("unknown {} {}", a.starts_with("-") ? "option" : "argument", io::shown(a)));
    }
  }
  if (cl.help || cl.version) return cl;
  if (!config_given) throw UsageError("--config FILE is required");
  if (!out_given) throw UsageError("--out DIR is required");
  if (cl.config_path.empty()) throw UsageError("--config: the file name is empty");
  if (cl.out_dir.empty()) throw UsageError("--out: the folder name is empty");
  return cl;
}

std::string help_text() {
  return R"(Usage: miniamr-netbench --config FILE --out DIR [--no-plots]
       mpirun -np 2 miniamr-netbench --config bench/netbench.yaml --out results/

MPI network micro-benchmark of miniamr: ping-pong latency, streaming and bidirectional
bandwidth, allreduce and a stage's neighbour exchange, over the message sizes a YAML config
lists. Point-to-point tests run between one pair of ranks per pair class (same_node,
other_node; MPI_Comm_split_type finds the nodes), one test at a time; the others on every rank.
Rank 0 schedules the tests and gathers the times.

Options:
  --config FILE   the tests (see bench/netbench.yaml)
  --out DIR       where results go (created if missing):
                    results.csv     one row per test, pair class and message size
                    model.yaml      alpha-beta fits of the ping-pong one-way times per pair
                                    class (miniamr --lb_link_model reads it), LogGP-style
                                    parameters where the stream test ran
                    latency.png, bandwidth.png   log-log plots (python3-matplotlib)
  --no-plots      write no plots
  --help          this text
  --version       the version and build

Exit status: 0 done; 1 a failure while measuring or writing; 2 bad input (command line or
config), found before any measurement.
)";
}

}  // namespace miniamr::netbench
