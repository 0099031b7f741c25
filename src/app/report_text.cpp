// The end report as text: what ran (runtime, kernels, how ownership was cut or balanced), each
// phase's time, the counters, the final checksums and the reference's Summary line.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app/errors.hpp"
#include "app/objects.hpp"
#include "app/report.hpp"

namespace miniamr::app {

namespace {

const char* ownership_curve(const Config& c) {
  return c.hilbert_ownership() ? "Hilbert" : "Morton";
}

const char* weight_name(LbWeight w) {
  return w == LbWeight::kBlocks  ? "one per block"
         : w == LbWeight::kModel ? "cost model"
                                 : "measured time";
}

// How ownership is decided, as configured: the static runtime's curve cut, or the dynamic
// runtime's balancer (which replaces that cut).
std::string balance_plan(const Report& r) {
  const Config& c = r.config;
  if (r.balanced_dynamically) {
    if (c.lb == "none")
      return "Load balance: none (--lb none): tasks move between threads, blocks never between "
             "ranks";
    const std::string how =
        c.lb_replay_path.empty()
            ? fmt::format(
                  "each refinement step cut by the ranks' measured speeds, and every {} "
                  "timesteps blocks moved when the slowest rank's predicted stage time exceeds "
                  "{:.2f} x the mean and the gain beats the noise and the cost of moving",
                  c.lb_freq, c.lb_threshold)
            : fmt::format("replaying the moves logged in {}", c.lb_replay_path);
    return fmt::format(
        "Load balance: dynamic balancer, strategy {}, {}; a move costs {:.3g} us + bytes at "
        "{:.3g} GB/s ({})",
        c.lb, how, r.link.latency_s * 1e6, r.link.bandwidth_Bps / 1e9,
        c.lb_link_model_path.empty() ? "measured at start-up" : c.lb_link_model_path);
  }
  if (c.lb_opt == 0)
    return fmt::format("Load balance: none (--lb_opt 0): ranks keep their ranges of the {} curve",
                       ownership_curve(c));
  return fmt::format(
      "Load balance: the {} curve cut into equal shares of weight ({}) {} when ranks differ by "
      "more than {}%",
      ownership_curve(c), weight_name(c.lb_weight),
      c.lb_opt == 2 ? "after every refinement iteration" : "at each refinement step", c.inbalance);
}

// What balancing did, and what it took.
std::string balance_outcome(const Report& r) {
  const std::string time = fmt::format("balancing time ave {:.6f} s, max {:.6f} s",
                                       r.load_balance.avg, r.load_balance.max);
  const std::string gathered = fmt::format("{} blocks gathered so that families could coarsen",
                                           r.stats.blocks_moved_coarsen);
  if (r.balanced_dynamically) {
    const BalanceStats& b = r.balance;
    return fmt::format(
        "Load balance: {} strategy, refinement cuts {}, decisions taken {} and skipped {}, "
        "blocks migrated {} ({} at refinement, {:.1f} MiB), final work shares {:.3f}, final "
        "imbalance {:.3f}; {}; {}",
        r.config.lb, b.refinement_cuts, b.decisions_taken, b.decisions_skipped, b.blocks_migrated,
        b.blocks_migrated_at_refinement, double(b.bytes_migrated) / (1024.0 * 1024.0),
        fmt::join(b.final_shares, " "), b.final_imbalance, gathered, time);
  }
  return fmt::format(
      "Load balance: curve cuts moved {} blocks (re-cuts after a refinement step: {}); {}; {}",
      r.stats.blocks_moved_lb, r.stats.load_balances, gathered, time);
}

void print_objects(std::FILE* out, const Report& r) {
  const Config& c = r.config;
  fmt::print(out, "Objects: {}\n", c.objects.size());
  for (std::size_t i = 0; i < c.objects.size(); ++i) {
    const Object& a = c.objects[i];
    const Object& b = r.final_objects[i];
    fmt::print(out, "  object {}: {}, {}\n", i, object_type_name(a.type), bounce_name(a.bounce));
    fmt::print(out, "    center  {:f} {:f} {:f} -> {:f} {:f} {:f}\n", a.center[0], a.center[1],
               a.center[2], b.center[0], b.center[1], b.center[2]);
    fmt::print(out, "    move    {:f} {:f} {:f} per unit time\n", a.move[0], a.move[1], a.move[2]);
    fmt::print(out, "    size    {:f} {:f} {:f} -> {:f} {:f} {:f}\n", a.size[0], a.size[1],
               a.size[2], b.size[0], b.size[1], b.size[2]);
  }
}

// What was run: the ranks, runtime, kernels, mesh, objects, time loop and balancing.
void print_setup(std::FILE* out, const Report& r) {
  const Config& c = r.config;
  fmt::print(out,
             "Run on {} ranks x {} threads, {} runtime, rank grid {} x {} x {}, root blocks "
             "{} x {} x {}\n",
             r.ranks, r.threads, r.runtime_name, c.npx, c.npy, c.npz, c.npx * c.init_x,
             c.npy * c.init_y, c.npz * c.init_z);
  fmt::print(out,
             "Block size {} x {} x {}, {} variables, comm_vars {}, stencil {} ({} kernels, {}{})\n",
             c.nx, c.ny, c.nz, c.num_vars, c.effective_comm_vars(), c.stencil, r.stencil_backend,
             r.kernel_isa, r.kernel_calls.compact > 0 ? ", compact interiors" : "");
  fmt::print(out, "Levels of refinement {}, blocks can change by {} levels per refinement step\n",
             c.num_refine, c.effective_block_change());
  if (c.refine_ghost) fmt::print(out, "Ghost cells are checked for refinement\n");
  if (c.uniform_refine != 0)
    fmt::print(out, "Blocks are uniformly refined\n");
  else
    print_objects(out, r);
  fmt::print(out, "Timesteps {}, simulated time {:f}, stages per timestep {}\n",
             r.stats.timesteps_done, r.stats.sim_time, c.stages_per_ts);
  fmt::print(out, "Checksum every {} stages (tolerance 1e-{}), refine every {} timesteps\n",
             c.checksum_freq, c.error_tol, c.refine_freq);
  fmt::print(out, "{}\n", balance_plan(r));
}

void print_times(std::FILE* out, const Report& r) {
  const auto timing = [out](const char* name, const comm::Spread& s) {
    fmt::print(out, "{:<36} ave {:12.6f}  min {:12.6f}  max {:12.6f}\n", name, s.avg, s.min, s.max);
  };
  fmt::print(out, "Time (seconds)\n");
  timing("  total", r.total);
  timing("  compute (stencil + on-rank ghosts)", r.compute);
  timing("  communicate (messages)", r.communicate);
  timing("  checksum reductions", r.checksum);
  timing("  refinement", r.refine);
  timing("  load balance", r.load_balance);
  timing("  initialisation", r.init);
}

void print_counters(std::FILE* out, const Report& r) {
  fmt::print(out,
             "Cell-variable updates {}, {:.4g} per second in stages, effective bandwidth "
             "{:.2f} GB/s (16 B per update), {:f} GFLOPS\n",
             r.cell_var_updates, r.cell_var_updates_per_s(), r.effective_bandwidth_gbs(),
             r.gflops());
  fmt::print(
      out, "Refinement steps {}, blocks split {}, families coarsened {}, closure rounds {}\n",
      r.stats.refine_steps, r.stats.blocks_split, r.stats.blocks_reformed, r.stats.closure_rounds);
  fmt::print(out, "Blocks: final {}, per timestep {:f}, peak on a rank {}\n", r.stats.final_blocks,
             r.blocks_per_ts(), r.max_blocks);
  fmt::print(out,
             "Peak resident memory on a rank {:.1f} MiB (block storage at its peak {:.1f} MiB)\n",
             r.peak_rss_max / (1024.0 * 1024.0), r.field_bytes_max / (1024.0 * 1024.0));
  fmt::print(out, "{}\n", balance_outcome(r));
  if (r.simulated)
    fmt::print(out,
               "Simulated on platform {} (SMPI): the times are simulated, not measured (host "
               "allocator {})\n",
               r.platform, r.host_allocator);
}

void print_checksums(std::FILE* out, const Report& r) {
  if (r.config.compute == "model") {
    fmt::print(out,
               "Final checksums: none (--compute model charges the kernels' cost and computes "
               "nothing)\n");
    return;
  }
  fmt::print(out, "Final checksums:\n");
  for (std::size_t v = 0; v < r.stats.final_checksums.size(); ++v)
    fmt::print(out, "  var {:3d}  {:.17g}\n", v, r.stats.final_checksums[v]);
}

}  // namespace

std::string summary_line(const Report& r) {
  return fmt::format(
      "Summary: ranks {} ts {} time {:f} calc {:f} comm {:f} red {:f} refine {:f} blocks/ts {:f} "
      "max_blocks {}",
      r.ranks, r.stats.timesteps_done, r.total.avg, r.compute.avg, r.communicate.avg,
      r.checksum.avg, r.refine.avg, r.blocks_per_ts(), r.max_blocks);
}

void print_report(std::FILE* out, const Report& r, bool with_summary) {
  fmt::print(out, "\n ================ Start report ===================\n\n");
  fmt::print(out, "          miniamr (Mantevo miniAMR 1.7.0 compatible)\n\n");
  print_setup(out, r);
  fmt::print(out, "\n");
  print_times(out, r);
  fmt::print(out, "\n");
  print_counters(out, r);
  print_checksums(out, r);
  fmt::print(out, "\n ================== End report ===================\n");
  if (with_summary) fmt::print(out, "{}\n", summary_line(r));
}

std::string results_txt(const Report& report) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* mem = open_memstream(&buffer, &size);
  if (!mem) throw RunError("cannot format results.txt");
  print_report(mem, report, /*with_summary=*/false);
  std::fclose(mem);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

}  // namespace miniamr::app
